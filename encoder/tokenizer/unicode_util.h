#pragma once
// Unicode helpers for the tokenizers: the character classes of Hugging
// Face's BasicTokenizer (UTF-8 itself is common/utf8.h, re-exported here), backed by utf8proc (its Unicode
// tables; utf8proc 2.8 carries Unicode 15.0 where Python 3.11's unicodedata
// carries 14.0, so the two differ only on code points first assigned in 15.0).
// All functions are pure and thread-safe.

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "common/status_macros.h"
#include "common/utf8.h"

namespace neodb::encoder::unicode {

// OK when `text` is well-formed UTF-8 (no overlongs, no surrogates, nothing
// above U+10FFFF); else INVALID_ARGUMENT naming the byte offset.
absl::Status ValidateUtf8(std::string_view text);

// DecodeAt (REQUIRES: valid UTF-8, see ValidateUtf8) and AppendUtf8: the
// one codec's (common/utf8.h).
using ::neodb::utf8::AppendUtf8;
using ::neodb::utf8::DecodeAt;

// Number of code points in valid UTF-8 `text`.
size_t CountCodePoints(std::string_view text);

// Python's BasicTokenizer predicates (transformers/models/bert/tokenization_bert.py).
// _is_control: general category Cc, Cf, Co or Cs, not \t \n \r (Cn is kept, as
// Hugging Face's Rust tokenizers keep it; unicode_util.cc says why).
bool IsControl(char32_t cp);
// _is_whitespace: space, \t, \n, \r or category Zs.
bool IsWhitespace(char32_t cp);
// Characters other than IsWhitespace on which Python's str.split() also
// splits and that survive text cleaning: U+2028 (Zl) and U+2029 (Zp).
bool IsExtraSplitSpace(char32_t cp);
// _is_punctuation: ASCII 33–47, 58–64, 91–96, 123–126, or category P*.
bool IsPunctuation(char32_t cp);
// _is_chinese_char: the CJK Unified Ideographs blocks HF lists.
bool IsChineseChar(char32_t cp);
// Category Mn (what _run_strip_accents drops after NFD).
bool IsNonspacingMark(char32_t cp);

// Python's str.lower() of a single character (full lowercase mapping:
// U+0130 → "i̇", everything else the simple mapping). Appends to `out`.
void AppendLower(char32_t cp, std::vector<char32_t>* out);

// Canonical decomposition (NFD) of the sequence in place, canonical
// ordering included. `scratch` is reused storage.
void ToNfd(std::vector<char32_t>* cps, std::vector<char32_t>* scratch);

// Canonical composition (NFC) of the sequence in place.
void ToNfc(std::vector<char32_t>* cps, std::vector<char32_t>* scratch);

}  // namespace neodb::encoder::unicode
