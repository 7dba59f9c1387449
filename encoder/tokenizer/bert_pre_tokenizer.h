#pragma once
// BertPreTokenizer: Hugging Face BasicTokenizer (transformers'
// tokenization_bert.py) — text cleaning, CJK spacing, whitespace split,
// lower-casing, accent stripping and punctuation split — producing the words
// that WordPiece then splits. NEOBERT.md §4.
//
// Order of operations (as the slow Python BertTokenizer with
// do_lower_case=True, which lower-cases character by character before the
// BasicTokenizer runs, so there is no context-dependent final sigma):
//   1. drop U+0000, U+FFFD and controls (category C* except \t \n \r);
//      whitespace (\t \n \r, space, Zs) becomes a word boundary;
//   2. every CJK ideograph (IsChineseChar) is a word of its own;
//   3. U+2028 / U+2029 are boundaries too (Python's str.split() splits on them);
//   4. per whitespace token: lower-case (full mapping, U+0130 → "i̇"), then NFD
//      and drop Mn (strip_accents), or NFC when accents are kept;
//   5. every punctuation character is a word of its own.
// Thread-safe: immutable after construction; Split keeps its scratch state in
// the caller-supplied Scratch.

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/functional/function_ref.h"

namespace neodb::encoder {

struct BertNormalizeOptions {
  // Lower-case every character (Python str.lower). Default: true.
  bool lower_case = true;
  // NFD + drop Mn. HF's default (strip_accents=None) follows lower_case.
  bool strip_accents = true;
  // Put spaces around CJK ideographs. Default: true.
  bool tokenize_chinese_chars = true;
};

class BertPreTokenizer {
 public:
  // Reusable buffers; one per thread (or per call).
  struct Scratch {
    std::vector<char32_t> token;
    std::vector<char32_t> tmp;
    std::vector<char32_t> tmp2;
    std::string word;
  };

  explicit BertPreTokenizer(const BertNormalizeOptions& options) : options_(options) {}

  // Calls `emit` once per word of `text`, in order; the view is valid only
  // during the call. Words are non-empty UTF-8.
  // REQUIRES: `text` is valid UTF-8 (unicode::ValidateUtf8).
  void Split(std::string_view text, Scratch* scratch,
             absl::FunctionRef<void(std::string_view)> emit) const;

  const BertNormalizeOptions& options() const { return options_; }

 private:
  void SplitToken(Scratch* scratch, bool ascii,
                  absl::FunctionRef<void(std::string_view)> emit) const;

  BertNormalizeOptions options_;
};

}  // namespace neodb::encoder
