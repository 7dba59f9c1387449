#include "encoder/tokenizer/unicode_util.h"

#include <utf8proc.h>

#include <algorithm>

#include "absl/strings/str_cat.h"

namespace neodb::encoder::unicode {

absl::Status ValidateUtf8(std::string_view text) {
  if (const size_t at = utf8::FindInvalidUtf8(text); at != std::string_view::npos) {
    return absl::InvalidArgumentError(
        absl::StrCat("invalid UTF-8: ill-formed byte sequence at byte ", at));
  }
  return absl::OkStatus();
}

size_t CountCodePoints(std::string_view text) {
  size_t n = 0;
  for (const char c : text) n += (static_cast<unsigned char>(c) & 0xC0) != 0x80;
  return n;
}

namespace {
utf8proc_category_t Category(char32_t cp) {
  return utf8proc_category(static_cast<utf8proc_int32_t>(cp));
}
}  // namespace

bool IsControl(char32_t cp) {
  if (cp == '\t' || cp == '\n' || cp == '\r') return false;
  // Unassigned code points (Cn) are kept: Hugging Face's tokenizers (the Rust
  // BertNormalizer that transformers 5 and sentence-transformers run) delete
  // Cc, Cf, Co and Cs only, so a word holding an unassigned code point is
  // [UNK] there. transformers 4's Python BertTokenizer deleted Cn as well;
  // neodb matches what users' models run today (bert_golden_test).
  switch (Category(cp)) {
    case UTF8PROC_CATEGORY_CC:
    case UTF8PROC_CATEGORY_CF:
    case UTF8PROC_CATEGORY_CO:
    case UTF8PROC_CATEGORY_CS:
      return true;
    default:
      return false;
  }
}

bool IsWhitespace(char32_t cp) {
  if (cp == ' ' || cp == '\t' || cp == '\n' || cp == '\r') return true;
  if (cp < 0x80) return false;
  return Category(cp) == UTF8PROC_CATEGORY_ZS;
}

bool IsExtraSplitSpace(char32_t cp) { return cp == 0x2028 || cp == 0x2029; }

bool IsPunctuation(char32_t cp) {
  if ((cp >= 33 && cp <= 47) || (cp >= 58 && cp <= 64) || (cp >= 91 && cp <= 96) ||
      (cp >= 123 && cp <= 126)) {
    return true;
  }
  if (cp < 0x80) return false;
  switch (Category(cp)) {
    case UTF8PROC_CATEGORY_PC:
    case UTF8PROC_CATEGORY_PD:
    case UTF8PROC_CATEGORY_PS:
    case UTF8PROC_CATEGORY_PE:
    case UTF8PROC_CATEGORY_PI:
    case UTF8PROC_CATEGORY_PF:
    case UTF8PROC_CATEGORY_PO:
      return true;
    default:
      return false;
  }
}

bool IsChineseChar(char32_t cp) {
  return (cp >= 0x4E00 && cp <= 0x9FFF) || (cp >= 0x3400 && cp <= 0x4DBF) ||
         (cp >= 0x20000 && cp <= 0x2A6DF) || (cp >= 0x2A700 && cp <= 0x2B73F) ||
         (cp >= 0x2B740 && cp <= 0x2B81F) || (cp >= 0x2B820 && cp <= 0x2CEAF) ||
         (cp >= 0xF900 && cp <= 0xFAFF) || (cp >= 0x2F800 && cp <= 0x2FA1F);
}

bool IsNonspacingMark(char32_t cp) { return Category(cp) == UTF8PROC_CATEGORY_MN; }

void AppendLower(char32_t cp, std::vector<char32_t>* out) {
  if (cp < 0x80) {
    out->push_back(cp >= 'A' && cp <= 'Z' ? cp + ('a' - 'A') : cp);
  } else if (cp == 0x130) {  // SpecialCasing.txt: the only unconditional full lowercase.
    out->push_back(0x69);
    out->push_back(0x307);
  } else {
    out->push_back(static_cast<char32_t>(utf8proc_tolower(static_cast<utf8proc_int32_t>(cp))));
  }
}

namespace {
int CombiningClass(char32_t cp) {
  return utf8proc_get_property(static_cast<utf8proc_int32_t>(cp))->combining_class;
}

void Decompose(std::vector<char32_t>* cps, std::vector<char32_t>* scratch) {
  scratch->clear();
  utf8proc_int32_t buf[32];
  for (const char32_t cp : *cps) {
    if (cp < 0xC0) {  // Nothing below U+00C0 has a canonical decomposition.
      scratch->push_back(cp);
      continue;
    }
    const utf8proc_ssize_t n = utf8proc_decompose_char(static_cast<utf8proc_int32_t>(cp), buf, 32,
                                                       UTF8PROC_DECOMPOSE, nullptr);
    NEODB_CHECK(n > 0 && n <= 32);  // Canonical decompositions are at most 4 long.
    for (utf8proc_ssize_t k = 0; k < n; ++k) scratch->push_back(static_cast<char32_t>(buf[k]));
  }
  // Canonical ordering: stable sort of every run of non-starters by class.
  auto& v = *scratch;
  for (size_t i = 1; i < v.size(); ++i) {
    const int ccc = CombiningClass(v[i]);
    if (ccc == 0) continue;
    size_t j = i;
    while (j > 0) {
      const int prev = CombiningClass(v[j - 1]);
      if (prev == 0 || prev <= ccc) break;
      std::swap(v[j - 1], v[j]);
      --j;
    }
  }
  cps->swap(*scratch);
}
}  // namespace

void ToNfd(std::vector<char32_t>* cps, std::vector<char32_t>* scratch) { Decompose(cps, scratch); }

void ToNfc(std::vector<char32_t>* cps, std::vector<char32_t>* scratch) {
  Decompose(cps, scratch);
  if (cps->empty()) return;
  static_assert(sizeof(char32_t) == sizeof(utf8proc_int32_t));
  const utf8proc_ssize_t n = utf8proc_normalize_utf32(
      reinterpret_cast<utf8proc_int32_t*>(cps->data()), static_cast<utf8proc_ssize_t>(cps->size()),
      static_cast<utf8proc_option_t>(UTF8PROC_COMPOSE | UTF8PROC_STABLE));
  NEODB_CHECK(n >= 0);
  cps->resize(static_cast<size_t>(n));
}

}  // namespace neodb::encoder::unicode
