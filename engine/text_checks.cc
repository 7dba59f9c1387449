#include "engine/text_checks.h"

#include <random>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
namespace {
// Mirrors kMaxDocumentIdBytes (db/document.h).
constexpr size_t kMaxDocumentIdBytes = 512;
}  // namespace

namespace neodb::engine {

absl::Status CheckText(std::string_view what, std::string_view text) {
  if (text.empty()) return absl::InvalidArgumentError(absl::StrCat(std::string(what), " is empty"));
  if (size_t at = FindInvalidUtf8(text); at != std::string_view::npos) {
    return absl::InvalidArgumentError(absl::StrCat(
        std::string(what), " is not valid UTF-8 (bad byte sequence at offset ", at, ")"));
  }
  return absl::OkStatus();
}

absl::Status CheckDocumentId(std::string_view id) {
  if (id.empty()) return absl::InvalidArgumentError("document id is empty");
  if (id.size() > kMaxDocumentIdBytes) {
    return absl::InvalidArgumentError(absl::StrCat(
        "document id is ", id.size(), " bytes, over the limit of ", kMaxDocumentIdBytes));
  }
  if (FindInvalidUtf8(id) != std::string_view::npos) {
    return absl::InvalidArgumentError("document id is not valid UTF-8");
  }
  for (unsigned char c : id) {
    if (c < 0x20 || c == 0x7F) {
      return absl::InvalidArgumentError("document id contains a control character");
    }
  }
  return absl::OkStatus();
}

std::string GenerateDocumentId() {
  thread_local std::mt19937_64 rng(std::random_device{}());
  return absl::StrFormat("%016x%016x", rng(), rng());
}

}  // namespace neodb::engine
