#include "index/keyword/analyzer.h"

#include "index/keyword/segmenter.h"
#include "index/keyword/snowball_stemmer.h"
#include "index/keyword/stop_words.h"
#include "index/keyword/unicode_text.h"

namespace neodb::keyword {

std::vector<Token> Analyzer::Analyze(std::string_view text) const {
  std::string clean = SanitizeUtf8(text);
  if (kind_ != AnalyzerKind::kNone) clean = NormalizeNfkcCasefold(clean);
  std::vector<SegmentToken> segments = Segment(DecodeUtf8(clean), kMaxTermBytes);
  std::vector<Token> out;
  out.reserve(segments.size());
  if (kind_ != AnalyzerKind::kEnglish) {
    for (SegmentToken& s : segments) out.push_back({std::move(s.text), s.overlap});
    return out;
  }
  SnowballStemmer stemmer;  // per call: libstemmer is not thread-safe
  for (SegmentToken& s : segments) {
    // A joined compound is kept even if it is a stop word ("no-go" -> "nogo"
    // is not one, but "in-to" -> "into" is): the parts already carry the
    // stop-word decision, and the joined form only adds precision.
    // Possessive "'s" off before the stop-word test, as Lucene's
    // EnglishPossessiveFilter does, so "it's" is the stop word "it".
    if (s.text.size() > 2 && s.text.ends_with("'s")) s.text.resize(s.text.size() - 2);
    if (!s.overlap && IsEnglishStopWord(s.text)) continue;
    std::string stem = stemmer.Stem(s.text);
    if (stem.empty()) continue;
    out.push_back({std::move(stem), s.overlap});
  }
  return out;
}

size_t CountedLength(const std::vector<Token>& tokens) {
  size_t n = 0;
  for (const Token& t : tokens) n += t.overlap ? 0 : 1;
  return n;
}

}  // namespace neodb::keyword
