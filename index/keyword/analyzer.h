#pragma once
// Analyzer: text -> index terms, the same for documents and queries.
//
//   english: repair UTF-8 -> NFKC + case fold -> segment -> strip possessive
//            "'s" -> drop stop words -> Snowball English stem
//   simple:  repair UTF-8 -> NFKC + case fold -> segment
//   none:    repair UTF-8 -> segment (terms as written)
//
// Segmentation (compounds, CJK, apostrophes, numbers) is segmenter.h's.
// Hostile input is safe: invalid UTF-8 becomes U+FFFD (a separator), a term is
// cut to kMaxTermBytes, and the cost is linear in the input.
// Thread-safe: Analyze is const and keeps no state between calls.

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "index/keyword/analyzer_kind.h"

namespace neodb::keyword {

// Longest term kept, in bytes of UTF-8 (a longer token keeps its longest
// whole-code-point prefix). Long enough for real words, chemical and gene
// names; bounds the dictionary against a 100 KB "word" of hostile input.
inline constexpr size_t kMaxTermBytes = 128;

struct Token {
  std::string term;
  // Shares its position with other tokens (a joined compound or a CJK pair):
  // scored like any term, not counted in the document length.
  bool overlap = false;
};

class Analyzer {
 public:
  explicit Analyzer(AnalyzerKind kind) : kind_(kind) {}

  AnalyzerKind kind() const { return kind_; }

  // The tokens of `text` in text order (stop words removed for english).
  std::vector<Token> Analyze(std::string_view text) const;

 private:
  AnalyzerKind kind_;
};

// The number of tokens that count in a document's length (not overlap).
size_t CountedLength(const std::vector<Token>& tokens);

}  // namespace neodb::keyword
