#pragma once
// Reading Hugging Face tokenizer files for WordPiece: tokenizer.json (the
// "tokenizers" library format) and tokenizer_config.json.

#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "encoder/tokenizer/wordpiece_tokenizer.h"

namespace neodb::encoder {

// The fields of tokenizer_config.json we honour; unset when absent or null.
struct TokenizerConfigOverrides {
  std::optional<bool> do_lower_case;
  std::optional<bool> strip_accents;
  std::optional<bool> tokenize_chinese_chars;
  std::optional<int> max_input_chars_per_word;

  void ApplyTo(WordPieceOptions* options) const;
};

// Parses tokenizer_config.json contents. Errors name `source` and the field.
absl::StatusOr<TokenizerConfigOverrides> ParseTokenizerConfig(std::string_view contents,
                                                              const std::string& source);

// Builds a WordPiece tokenizer from tokenizer.json contents: model.type must
// be "WordPiece", model.vocab a {token: id} map with ids exactly 0..V-1,
// continuing_subword_prefix "##" and unk_token "[UNK]" when given;
// a BertNormalizer (alone or in a Sequence) sets lowercase, strip_accents and
// handle_chinese_chars. `overrides` (tokenizer_config.json) win over it, as
// in transformers' BertTokenizerFast.
absl::StatusOr<std::unique_ptr<WordPieceTokenizer>> WordPieceFromTokenizerJson(
    std::string_view contents, const TokenizerConfigOverrides& overrides,
    const std::string& source);

}  // namespace neodb::encoder
