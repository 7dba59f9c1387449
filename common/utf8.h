#pragma once
// The one UTF-8 codec of neodb (RFC 3629: no overlong forms, no encoded
// surrogates, nothing above U+10FFFF). Every room that reads or writes UTF-8
// uses it: the request checks (engine), the tokenizers (encoder), the keyword
// analyzers (index/keyword). Header-only so that it adds no link dependency to
// rooms that share nothing else.
//
// Two ways to read: strictly (FindInvalidUtf8, then DecodeAt on text known to
// be valid, which skips every check in the hot loop of a tokenizer), or
// lossily (SanitizeUtf8, DecodeUtf8: each byte that starts no well-formed
// sequence becomes U+FFFD, as the WHATWG decoder does byte by byte).

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace neodb::utf8 {

inline constexpr char32_t kReplacement = 0xFFFD;

// The length of the well-formed sequence starting at s[i] and its code point
// in *cp; 0 when s[i] starts none (a stray continuation byte, a bad lead
// byte, a truncated, overlong or surrogate sequence, or one past U+10FFFF).
// REQUIRES: i < s.size().
inline size_t SequenceAt(std::string_view s, size_t i, char32_t* cp) {
  const auto* p = reinterpret_cast<const unsigned char*>(s.data());
  const unsigned char c = p[i];
  if (c < 0x80) {
    *cp = c;
    return 1;
  }
  size_t len;
  char32_t v;
  if (c >= 0xC2 && c <= 0xDF) {
    len = 2;
    v = c & 0x1F;
  } else if (c >= 0xE0 && c <= 0xEF) {
    len = 3;
    v = c & 0x0F;
  } else if (c >= 0xF0 && c <= 0xF4) {
    len = 4;
    v = c & 0x07;
  } else {
    return 0;
  }
  if (i + len > s.size()) return 0;
  for (size_t k = 1; k < len; ++k) {
    if ((p[i + k] & 0xC0) != 0x80) return 0;
    v = (v << 6) | (p[i + k] & 0x3F);
  }
  if ((len == 3 && v < 0x800) || (len == 4 && (v < 0x10000 || v > 0x10FFFF)) ||
      (v >= 0xD800 && v <= 0xDFFF)) {
    return 0;
  }
  *cp = v;
  return len;
}

// The byte offset of the first ill-formed sequence, or npos when `s` is
// valid UTF-8.
inline size_t FindInvalidUtf8(std::string_view s) {
  char32_t cp;
  for (size_t i = 0; i < s.size();) {
    const size_t n = SequenceAt(s, i, &cp);
    if (n == 0) return i;
    i += n;
  }
  return std::string_view::npos;
}

// The code point at *pos, advancing *pos past it. REQUIRES: `text` is valid
// UTF-8 (FindInvalidUtf8) and *pos < text.size() is a code point boundary.
inline char32_t DecodeAt(std::string_view text, size_t* pos) {
  const auto* s = reinterpret_cast<const unsigned char*>(text.data()) + *pos;
  const unsigned char c = s[0];
  if (c < 0x80) {
    *pos += 1;
    return c;
  }
  if (c < 0xE0) {
    *pos += 2;
    return (char32_t{c & 0x1Fu} << 6) | (s[1] & 0x3Fu);
  }
  if (c < 0xF0) {
    *pos += 3;
    return (char32_t{c & 0x0Fu} << 12) | (char32_t{s[1] & 0x3Fu} << 6) | (s[2] & 0x3Fu);
  }
  *pos += 4;
  return (char32_t{c & 0x07u} << 18) | (char32_t{s[1] & 0x3Fu} << 12) |
         (char32_t{s[2] & 0x3Fu} << 6) | (s[3] & 0x3Fu);
}

// Appends the UTF-8 form of `cp`. REQUIRES: cp <= 0x10FFFF.
inline void AppendUtf8(char32_t cp, std::string* out) {
  if (cp < 0x80) {
    out->push_back(static_cast<char>(cp));
  } else if (cp < 0x800) {
    out->push_back(static_cast<char>(0xC0 | (cp >> 6)));
    out->push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else if (cp < 0x10000) {
    out->push_back(static_cast<char>(0xE0 | (cp >> 12)));
    out->push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else {
    out->push_back(static_cast<char>(0xF0 | (cp >> 18)));
    out->push_back(static_cast<char>(0x80 | ((cp >> 12) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  }
}

// `text` with each byte that starts no well-formed sequence replaced by U+FFFD.
inline std::string SanitizeUtf8(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  char32_t cp;
  for (size_t i = 0; i < text.size();) {
    const size_t n = SequenceAt(text, i, &cp);
    if (n == 0) {
      AppendUtf8(kReplacement, &out);
      ++i;
    } else {
      out.append(text.data() + i, n);
      i += n;
    }
  }
  return out;
}

// The code points of `text`, U+FFFD for each byte that starts no
// well-formed sequence.
inline std::u32string DecodeUtf8(std::string_view text) {
  std::u32string out;
  out.reserve(text.size());
  char32_t cp;
  for (size_t i = 0; i < text.size();) {
    const size_t n = SequenceAt(text, i, &cp);
    out.push_back(n == 0 ? kReplacement : cp);
    i += n == 0 ? 1 : n;
  }
  return out;
}

}  // namespace neodb::utf8
