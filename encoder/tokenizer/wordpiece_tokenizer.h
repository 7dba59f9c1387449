#pragma once
// WordPieceTokenizer: Hugging Face BertTokenizer behaviour (NEOBERT.md §4):
// BertPreTokenizer words, then greedy longest-match-first WordPiece with the
// "##" continuation prefix; a word longer than max_input_chars_per_word code
// points, or one with no full match, becomes [UNK].
//
// Like HF's tokenizers, the exact strings "[PAD]", "[UNK]", "[CLS]", "[SEP]"
// and "[MASK]" inside the input text (case-sensitive, matched before any
// normalisation) become their ids; set match_special_tokens=false to treat
// them as text ("[", "sep", "]").
//
// Thread-safe: immutable after construction.

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "encoder/tokenizer/bert_pre_tokenizer.h"
#include "encoder/tokenizer/tokenizer.h"

namespace neodb::encoder {

struct WordPieceOptions {
  // Lower-case the text (do_lower_case). Default: true.
  bool lower_case = true;
  // Strip accents (NFD, drop Mn). Default: unset = follows lower_case (HF).
  std::optional<bool> strip_accents;
  // Spaces around CJK ideographs (tokenize_chinese_chars). Default: true.
  bool tokenize_chinese_chars = true;
  // Longer words (in code points) become [UNK]. Default: 100.
  int max_input_chars_per_word = 100;
  // Special-token strings in the text become their ids. Default: true (HF).
  bool match_special_tokens = true;
};

class WordPieceTokenizer final : public Tokenizer {
 public:
  // `tokens[i]` has id i. Errors (INVALID_ARGUMENT): empty vocabulary, an
  // empty or non-UTF-8 token, a duplicate, a missing special token (all
  // missing ones are named), max_input_chars_per_word < 1.
  static absl::StatusOr<std::unique_ptr<WordPieceTokenizer>> Create(
      std::vector<std::string> tokens, const WordPieceOptions& options);

  // vocab.txt contents: one token per line, id = line number; "\n" or
  // "\r\n" line ends; a final newline is optional. `source` names the file
  // in errors.
  static absl::StatusOr<std::unique_ptr<WordPieceTokenizer>> FromVocabText(
      std::string_view contents, const WordPieceOptions& options, const std::string& source);

  absl::StatusOr<std::vector<int32_t>> Tokenize(std::string_view text) const override;
  const SpecialTokens& special() const override { return special_; }
  int32_t vocab_size() const override { return static_cast<int32_t>(tokens_.size()); }
  std::string IdToToken(int32_t id) const override;
  std::string_view kind() const override { return "wordpiece"; }
  // Writes vocab.txt and tokenizer_config.json (do_lower_case, strip_accents,
  // tokenize_chinese_chars) into `dir`, which must exist.
  absl::Status SaveTo(const std::string& dir) const override;

  // The words BertPreTokenizer makes of `text` (before WordPiece), for tests
  // and tools. Special-token matching is not applied.
  absl::StatusOr<std::vector<std::string>> PreTokenize(std::string_view text) const;
  // The token strings of Tokenize(text).
  absl::StatusOr<std::vector<std::string>> TokenizeToStrings(std::string_view text) const;

  const WordPieceOptions& options() const { return options_; }

 private:
  WordPieceTokenizer(std::vector<std::string> tokens, const WordPieceOptions& options,
                     const BertNormalizeOptions& normalize);
  void TokenizeSegment(std::string_view segment, BertPreTokenizer::Scratch* scratch,
                       std::vector<int32_t>* ids) const;
  void AppendWordPieces(std::string_view word, std::vector<int32_t>* ids) const;

  std::vector<std::string> tokens_;
  WordPieceOptions options_;
  BertPreTokenizer pre_tokenizer_;
  // Every token, keyed verbatim (word-initial lookups).
  absl::flat_hash_map<std::string, int32_t> word_start_;
  // Tokens that start with "##", keyed without the prefix.
  absl::flat_hash_map<std::string, int32_t> continuation_;
  size_t max_start_bytes_ = 0;
  size_t max_continuation_bytes_ = 0;
  SpecialTokens special_;
  // (string, id) of the special tokens matched in input text.
  std::vector<std::pair<std::string, int32_t>> special_strings_;
};

}  // namespace neodb::encoder
