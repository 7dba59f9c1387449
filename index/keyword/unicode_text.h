#pragma once
// Unicode plumbing for the analyzers, over utf8proc: NFKC + case folding and
// the character classes the segmenter works on; repairing, decoding and
// encoding UTF-8 are the one codec's (common/utf8.h), re-exported here.
// Internal to index/keyword/.

#include <cstdint>
#include <string>
#include <string_view>

#include "common/utf8.h"

namespace neodb::keyword {

// How the segmenter treats one code point.
enum class CharClass : uint8_t {
  kSeparator,   // spaces, symbols, most punctuation, controls, unassigned: ends a word
  kLetter,      // L* (outside the ideographic ranges below)
  kDigit,       // N* (Nd, Nl, No)
  kMark,        // M*: continues the word it follows, never starts one
  kIdeograph,   // Han, Hiragana, Katakana: each one a unit (no spaces in CJK text)
  kJoiner,      // Pd (hyphens, dashes) and Pc ('_'): joins two words into a compound
  kApostrophe,  // U+0027, U+2019: inside a word between two letters ("don't")
  kNumberSep,   // '.' and ',': inside a number between two digits ("3.14", "1,000")
  kIgnorable,   // Cf other than U+200B (soft hyphen, ZWJ, ZWNJ, ...): skipped, splits nothing
};

CharClass Classify(char32_t c);

// SanitizeUtf8: every invalid UTF-8 sequence (stray continuation bytes,
// overlong forms, surrogates, truncated sequences, code points past U+10FFFF)
// replaced by U+FFFD, one replacement per offending byte; valid input comes
// back unchanged. DecodeUtf8: the code points. AppendUtf8: the encoding.
using ::neodb::utf8::AppendUtf8;
using ::neodb::utf8::DecodeUtf8;
using ::neodb::utf8::SanitizeUtf8;

// NFKC with Unicode case folding, default-ignorable code points removed
// (utf8proc COMPAT|COMPOSE|CASEFOLD|IGNORE|STABLE). REQUIRES: valid UTF-8 (see
// SanitizeUtf8). Should utf8proc fail (only out of memory), returns the input
// unchanged: a search index must not lose a document over normalisation.
std::string NormalizeNfkcCasefold(std::string_view utf8);

// Appends the longest prefix of `utf8` (valid UTF-8) made of whole code points
// that keeps out->size() <= max_bytes.
void AppendBounded(std::string_view utf8, size_t max_bytes, std::string* out);

}  // namespace neodb::keyword
