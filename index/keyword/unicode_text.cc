#include "index/keyword/unicode_text.h"

#include <algorithm>
#include <cstdlib>

#include "utf8proc.h"

namespace neodb::keyword {
namespace {

// Scripts written without spaces between words whose characters are treated
// one by one (and in adjacent pairs, see segmenter.h). Ranges of the Unicode
// blocks; NFKC has already folded half-width katakana into these.
bool IsIdeographic(char32_t c) {
  return (c >= 0x3040 && c <= 0x30FF) ||  // Hiragana, Katakana
         (c >= 0x31F0 && c <= 0x31FF) ||  // Katakana phonetic extensions
         (c >= 0x3400 && c <= 0x4DBF) ||  // CJK extension A
         (c >= 0x4E00 && c <= 0x9FFF) ||  // CJK unified ideographs
         (c >= 0xF900 && c <= 0xFAFF) ||  // CJK compatibility ideographs
         (c >= 0x20000 && c <= 0x3134F);  // CJK extensions B-G
}

}  // namespace

CharClass Classify(char32_t c) {
  if (c < 0x80) {  // ASCII fast path: the same answers as the general code below
    if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')) return CharClass::kLetter;
    if (c >= '0' && c <= '9') return CharClass::kDigit;
    if (c == '-' || c == '_') return CharClass::kJoiner;
  }
  if (c == '\'' || c == 0x2019) return CharClass::kApostrophe;
  if (c == '.' || c == ',') return CharClass::kNumberSep;
  if (c == 0x200B) return CharClass::kSeparator;  // ZERO WIDTH SPACE is a word break
  switch (utf8proc_category(static_cast<utf8proc_int32_t>(c))) {
    case UTF8PROC_CATEGORY_LU:
    case UTF8PROC_CATEGORY_LL:
    case UTF8PROC_CATEGORY_LT:
    case UTF8PROC_CATEGORY_LM:
    case UTF8PROC_CATEGORY_LO:
      return IsIdeographic(c) ? CharClass::kIdeograph : CharClass::kLetter;
    case UTF8PROC_CATEGORY_MN:
    case UTF8PROC_CATEGORY_MC:
    case UTF8PROC_CATEGORY_ME:
      return CharClass::kMark;
    case UTF8PROC_CATEGORY_ND:
    case UTF8PROC_CATEGORY_NL:
    case UTF8PROC_CATEGORY_NO:
      return CharClass::kDigit;
    case UTF8PROC_CATEGORY_PC:
    case UTF8PROC_CATEGORY_PD:
      return CharClass::kJoiner;
    case UTF8PROC_CATEGORY_CF:
      return CharClass::kIgnorable;
    default:
      return CharClass::kSeparator;
  }
}

std::string NormalizeNfkcCasefold(std::string_view utf8) {
  // ASCII is NFKC-stable, holds no default-ignorable code point, and folds by
  // lower-casing: most English text skips utf8proc's decompose/recompose.
  if (std::all_of(utf8.begin(), utf8.end(),
                  [](char ch) { return static_cast<uint8_t>(ch) < 0x80; })) {
    std::string out(utf8);
    for (char& ch : out) {
      if (ch >= 'A' && ch <= 'Z') ch = static_cast<char>(ch - 'A' + 'a');
    }
    return out;
  }
  utf8proc_uint8_t* mapped = nullptr;
  utf8proc_ssize_t n = utf8proc_map(
      reinterpret_cast<const utf8proc_uint8_t*>(utf8.data()),
      static_cast<utf8proc_ssize_t>(utf8.size()), &mapped,
      static_cast<utf8proc_option_t>(UTF8PROC_STABLE | UTF8PROC_COMPAT | UTF8PROC_COMPOSE |
                                     UTF8PROC_CASEFOLD | UTF8PROC_IGNORE));
  if (n < 0) return std::string(utf8);
  std::string out(reinterpret_cast<const char*>(mapped), static_cast<size_t>(n));
  std::free(mapped);
  return out;
}

void AppendBounded(std::string_view utf8, size_t max_bytes, std::string* out) {
  if (out->size() >= max_bytes) return;
  size_t room = max_bytes - out->size();
  if (utf8.size() <= room) {
    out->append(utf8);
    return;
  }
  size_t cut = room;
  // Back up to a code point boundary: never split a multi-byte sequence.
  while (cut > 0 && (static_cast<uint8_t>(utf8[cut]) & 0xC0) == 0x80) --cut;
  out->append(utf8.substr(0, cut));
}

}  // namespace neodb::keyword
