#include "index/keyword/analyzer_kind.h"

#include "absl/strings/str_cat.h"

namespace neodb::keyword {

std::string_view AnalyzerKindName(AnalyzerKind kind) {
  switch (kind) {
    case AnalyzerKind::kEnglish:
      return "english";
    case AnalyzerKind::kSimple:
      return "simple";
    case AnalyzerKind::kNone:
      return "none";
  }
  return "unknown";
}

absl::StatusOr<AnalyzerKind> ParseAnalyzerKind(std::string_view name) {
  for (AnalyzerKind kind : {AnalyzerKind::kEnglish, AnalyzerKind::kSimple, AnalyzerKind::kNone}) {
    if (name == AnalyzerKindName(kind)) return kind;
  }
  return absl::InvalidArgumentError(absl::StrCat("unknown analyzer \"", std::string(name),
                                                 "\" (expected english, simple or none)"));
}

}  // namespace neodb::keyword
