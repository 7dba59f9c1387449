#pragma once
// The English stop words of the `english` analyzer: Lucene's
// EnglishAnalyzer.ENGLISH_STOP_WORDS_SET, which Anserini's BEIR baselines
// also use (33 words). Deliberately short: BM25's idf already discounts common
// words, and a long list loses queries such as "the who" or "not found".

#include <string_view>

namespace neodb::keyword {

// True if `folded` (already case-folded) is an English stop word.
bool IsEnglishStopWord(std::string_view folded);

}  // namespace neodb::keyword
