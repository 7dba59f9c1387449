#pragma once
// The analyzer a keyword index uses, and its one string codec. The name is what
// a collection stores and what `--analyzer` takes, so it must never change
// meaning once written.

#include <string_view>

#include "absl/status/statusor.h"

namespace neodb::keyword {

enum class AnalyzerKind : uint8_t {
  // NFKC + case folding, Unicode segmentation, English stop words removed,
  // Snowball English (Porter2) stemming. The default.
  kEnglish = 0,
  // NFKC + case folding and Unicode segmentation; no stop words, no stemming.
  kSimple = 1,
  // Unicode segmentation of the text as written: no normalisation, no folding.
  kNone = 2,
};

// "english", "simple", "none".
std::string_view AnalyzerKindName(AnalyzerKind kind);
// The inverse of AnalyzerKindName; INVALID_ARGUMENT for any other name.
absl::StatusOr<AnalyzerKind> ParseAnalyzerKind(std::string_view name);

}  // namespace neodb::keyword
