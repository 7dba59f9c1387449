#include "api/engine/text_checks.h"

#include <random>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
namespace {
// Mirrors kMaxDocumentIdBytes (db/document.h).
constexpr size_t kMaxDocumentIdBytes = 512;
}  // namespace

namespace neodb::engine {

size_t FindInvalidUtf8(std::string_view s) {
  const auto* p = reinterpret_cast<const unsigned char*>(s.data());
  const size_t n = s.size();
  size_t i = 0;
  while (i < n) {
    unsigned char c = p[i];
    if (c < 0x80) {
      ++i;
      continue;
    }
    int len;
    uint32_t cp;
    if ((c & 0xE0) == 0xC0) {
      len = 2;
      cp = c & 0x1F;
    } else if ((c & 0xF0) == 0xE0) {
      len = 3;
      cp = c & 0x0F;
    } else if ((c & 0xF8) == 0xF0) {
      len = 4;
      cp = c & 0x07;
    } else {
      return i;
    }
    if (i + len > n) return i;
    for (int j = 1; j < len; ++j) {
      if ((p[i + j] & 0xC0) != 0x80) return i;
      cp = (cp << 6) | (p[i + j] & 0x3F);
    }
    if ((len == 2 && cp < 0x80) || (len == 3 && cp < 0x800) || (len == 4 && cp < 0x10000) ||
        cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) {
      return i;
    }
    i += len;
  }
  return std::string_view::npos;
}

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
