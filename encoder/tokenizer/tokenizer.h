#pragma once
// Tokenizer: text → token ids. Two implementations: WordPiece with Hugging
// Face BertTokenizer behaviour (NEOBERT.md §4) and SentencePiece.
// Implementations are immutable after loading and thread-safe.

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "common/status_macros.h"

namespace neodb::encoder {

struct SpecialTokens {
  int32_t pad = 0;
  int32_t unk = 100;
  int32_t cls = 101;
  int32_t sep = 102;
  int32_t mask = 103;
};

class Tokenizer {
 public:
  virtual ~Tokenizer() = default;

  // The ids of `text` WITHOUT [CLS]/[SEP] (the encoder adds them, per chunk
  // when it splits long input). Any valid UTF-8 is accepted, including the
  // empty string (→ no ids); invalid UTF-8 is INVALID_ARGUMENT.
  virtual absl::StatusOr<std::vector<int32_t>> Tokenize(std::string_view text) const = 0;

  // [CLS] Tokenize(text) [SEP], with no length limit.
  absl::StatusOr<std::vector<int32_t>> Encode(std::string_view text) const;

  virtual const SpecialTokens& special() const = 0;
  virtual int32_t vocab_size() const = 0;
  virtual std::string IdToToken(int32_t id) const = 0;
  // "wordpiece" or "sentencepiece".
  virtual std::string_view kind() const = 0;
  // Writes the files that LoadTokenizer reads back into `dir`, which must
  // exist (vocab.txt plus tokenizer_config.json, or tokenizer.model plus
  // special_tokens_map.json). Existing files of those names are replaced.
  virtual absl::Status SaveTo(const std::string& dir) const = 0;
};

// Loads the tokenizer of a checkpoint directory: vocab.txt, else the
// WordPiece vocab inside tokenizer.json, else a SentencePiece model
// (tokenizer.model, else the only *.model file). tokenizer_config.json's
// do_lower_case (and strip_accents, tokenize_chinese_chars) is honoured when
// present. NOT_FOUND names every file looked for when there is none;
// malformed files are INVALID_ARGUMENT naming the file and the problem.
absl::StatusOr<std::unique_ptr<Tokenizer>> LoadTokenizer(const std::string& dir);

}  // namespace neodb::encoder
