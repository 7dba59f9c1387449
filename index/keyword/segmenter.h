#pragma once
// Word segmentation by Unicode character class (unicode_text.h), in the spirit
// of UAX #29 word boundaries but with two choices of our own for search:
//
// * Compounds. Words joined by a hyphen, dash or underscore ("covid-19",
//   "IL-6", "state-of-the-art", "snake_case") yield each part as a token AND the
//   parts run together ("covid19", "il6", "stateoftheart") as an extra token
//   marked `overlap`. The parts let "covid" or "19" find the document; the
//   joined form lets a query for "covid19" find a text that writes "covid-19"
//   (and the reverse), and rewards the exact compound when a query contains
//   it (the query is segmented the same way). The joined token
//   stands at the same position as its parts (Lucene's WordDelimiterGraph
//   "catenate" token), so it does not count in the document length.
// * CJK. Han, Hiragana and Katakana have no spaces between words and we ship
//   no dictionary, so each character is a token (full recall: a one-character
//   query word still matches) and each adjacent pair is an extra `overlap`
//   token (Lucene's CJKBigramFilter with outputUnigrams): a query whose
//   characters appear adjacent in the document scores above one whose
//   characters are scattered. Other scripts without spaces (Thai, Lao, Khmer,
//   Myanmar) come out as one token per space-delimited run: no dictionary.
//
// Within a word: letters, digits and combining marks; an apostrophe between two
// letters ("don't", "o'brien"; U+2019 is written as U+0027 so both spellings
// match); '.' or ',' between two digits ("3.14", "1,000"). Everything else
// separates. Cf characters (soft hyphen, ZWJ) are skipped without splitting.
// A token longer than `max_term_bytes` keeps its longest whole-code-point
// prefix of at most that many bytes; the rest of it is consumed and dropped.

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace neodb::keyword {

struct SegmentToken {
  std::string text;
  // True for the extra tokens (joined compounds, CJK pairs) that share a
  // position with others and so do not count in the document length.
  bool overlap = false;
};

// The tokens of `text` (code points), in text order; a compound's joined token
// follows its parts, a CJK pair follows the pair's second character.
std::vector<SegmentToken> Segment(std::u32string_view text, size_t max_term_bytes);

}  // namespace neodb::keyword
