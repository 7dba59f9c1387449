#pragma once
// SentencePieceTokenizer: a libsentencepiece model (unigram or BPE).
//
// Special-token convention for models trained for neodb (see
// TrainSentencePiece): the pieces "[PAD]", "[UNK]", "[CLS]", "[SEP]" and
// "[MASK]" must exist; they are found by name with PieceToId, so their ids
// come from the model (TrainSentencePiece gives pad 0, unk 1, [CLS] 2 as BOS,
// [SEP] 3 as EOS and [MASK] 4 as a user-defined symbol). A model that lacks
// any of them is rejected with an error naming the missing pieces.
//
// Thread-safe: immutable after loading (SentencePieceProcessor::Encode is
// const and thread-safe).

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "encoder/tokenizer/sentencepiece_adapter.h"
#include "encoder/tokenizer/tokenizer.h"

namespace neodb::encoder {

class SentencePieceTokenizer final : public Tokenizer {
 public:
  // Loads a serialized ModelProto file (*.model).
  static absl::StatusOr<std::unique_ptr<SentencePieceTokenizer>> FromFile(const std::string& path);
  // Loads from the bytes of a *.model file; `source` names it in errors.
  static absl::StatusOr<std::unique_ptr<SentencePieceTokenizer>> FromSerializedProto(
      std::string_view bytes, const std::string& source);
  ~SentencePieceTokenizer() override;

  absl::StatusOr<std::vector<int32_t>> Tokenize(std::string_view text) const override;
  const SpecialTokens& special() const override { return special_; }
  int32_t vocab_size() const override;
  std::string IdToToken(int32_t id) const override;
  std::string_view kind() const override { return "sentencepiece"; }
  // Writes tokenizer.model (the model bytes, unchanged) and
  // special_tokens_map.json into `dir`, which must exist.
  absl::Status SaveTo(const std::string& dir) const override;

  // Pieces of Tokenize(text), for tests and tools.
  absl::StatusOr<std::vector<std::string>> TokenizeToStrings(std::string_view text) const;
  // Decodes ids back to text.
  absl::StatusOr<std::string> Decode(const std::vector<int32_t>& ids) const;

 private:
  SentencePieceTokenizer();

  std::unique_ptr<spm::Processor> processor_;
  std::string model_bytes_;
  SpecialTokens special_;
};

}  // namespace neodb::encoder
