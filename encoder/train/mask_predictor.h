#pragma once
// MaskPredictor: what a checkpoint's MLM head (decoder.weight [V, C],
// decoder.bias [V]) predicts at each [MASK] of a text. Behind `neodb
// fill-mask` and the default model's MLM sanity test.

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "common/status_macros.h"
#include "encoder/checkpoint/weights.h"
#include "encoder/tokenizer/tokenizer.h"
#include "encoder/train/train_model.h"
#include "encoder/train/train_params.h"

namespace neodb::encoder::train {

struct MaskScores {
  int64_t position = 0;       // index in the framed ids ([CLS] is 0)
  std::vector<float> logits;  // [V]
};

class MaskPredictor {
 public:
  // INVALID_ARGUMENT when the checkpoint has no MLM head.
  static absl::StatusOr<std::unique_ptr<MaskPredictor>> Open(const std::string& dir);

  // One entry per [MASK] token of `text` (tokenised with the checkpoint's
  // tokenizer, which maps the literal "[MASK]" to its id), in order. A
  // SentencePiece word-start piece ("▁") alone right before [MASK] is
  // dropped: in training the masked piece carried its own "▁" ("▁mat"), so
  // "the [MASK]" must frame it the same way.
  // INVALID_ARGUMENT when the text is longer than the model's max_length.
  absl::StatusOr<std::vector<MaskScores>> Predict(std::string_view text) const;

  // The same for framed ids ([CLS] … [SEP]) that already hold the mask id.
  absl::StatusOr<std::vector<MaskScores>> Predict(std::vector<int32_t> ids) const;

  const Tokenizer& tokenizer() const { return *tokenizer_; }
  const NeoBertConfig& config() const { return weights_.config; }

 private:
  MaskPredictor(NeoBertWeights weights, std::unique_ptr<Tokenizer> tokenizer);

  NeoBertWeights weights_;
  std::unique_ptr<Tokenizer> tokenizer_;
  TrainParams<float> params_;
  TrainModel<float> model_;
};

// 1-based rank of `token` among `logits` (1 = the arg-max; ties count against
// the token).
int64_t RankOf(const std::vector<float>& logits, int32_t token);

}  // namespace neodb::encoder::train
