#include "encoder/train/mask_predictor.h"

#include <cblas.h>

#include <utility>

#include "absl/strings/str_cat.h"

namespace neodb::encoder::train {

MaskPredictor::MaskPredictor(NeoBertWeights weights, std::unique_ptr<Tokenizer> tokenizer)
    : weights_(std::move(weights)),
      tokenizer_(std::move(tokenizer)),
      params_(ParamsFromWeights(weights_)),
      model_(params_.layout) {}

absl::StatusOr<std::unique_ptr<MaskPredictor>> MaskPredictor::Open(const std::string& dir) {
  ASSIGN_OR_RETURN(NeoBertWeights weights, LoadCheckpoint(dir, {.load_decoder = true}));
  if (!weights.decoder_weight || !weights.decoder_bias) {
    return absl::InvalidArgumentError(
        absl::StrCat(dir, " has no MLM head (decoder.weight/decoder.bias)"));
  }
  ASSIGN_OR_RETURN(std::unique_ptr<Tokenizer> tokenizer, LoadTokenizer(dir));
  return std::unique_ptr<MaskPredictor>(new MaskPredictor(std::move(weights), std::move(tokenizer)));
}

absl::StatusOr<std::vector<MaskScores>> MaskPredictor::Predict(std::string_view text) const {
  ASSIGN_OR_RETURN(std::vector<int32_t> encoded, tokenizer_->Encode(text));
  std::vector<int32_t> ids;
  ids.reserve(encoded.size());
  for (size_t i = 0; i < encoded.size(); ++i) {
    const bool lone_word_start = i + 1 < encoded.size() &&
                                 encoded[i + 1] == tokenizer_->special().mask &&
                                 tokenizer_->IdToToken(encoded[i]) == "\u2581";
    if (!lone_word_start) ids.push_back(encoded[i]);
  }
  return Predict(std::move(ids));
}

absl::StatusOr<std::vector<MaskScores>> MaskPredictor::Predict(std::vector<int32_t> ids) const {
  const NeoBertConfig& config = weights_.config;
  for (int32_t id : ids) {
    if (id < 0 || id >= config.vocab_size) {
      return absl::InvalidArgumentError(
          absl::StrCat("token id ", id, " is outside the vocabulary of ", config.vocab_size));
    }
  }
  if (static_cast<int64_t>(ids.size()) > config.max_length) {
    return absl::InvalidArgumentError(absl::StrCat("the text is ", ids.size(),
                                                   " tokens; the model takes ", config.max_length));
  }
  PackedBatch batch;
  AppendSequence(&batch, ids);
  const int64_t c = config.hidden_size, v = config.vocab_size;
  std::vector<float> hidden(ids.size() * static_cast<size_t>(c));
  model_.Forward(params_.values.data(), batch, 0, nullptr, Pooling::kMean, nullptr, nullptr, -1,
                 nullptr, hidden.data());
  std::vector<MaskScores> out;
  for (size_t pos = 0; pos < ids.size(); ++pos) {
    if (ids[pos] != tokenizer_->special().mask) continue;
    MaskScores s;
    s.position = static_cast<int64_t>(pos);
    s.logits.assign(weights_.decoder_bias->data<float>(), weights_.decoder_bias->data<float>() + v);
    // logits = decoder.weight [V, C] · hidden[pos] + decoder.bias
    cblas_sgemv(CblasRowMajor, CblasNoTrans, static_cast<int>(v), static_cast<int>(c), 1.0f,
                weights_.decoder_weight->data<float>(), static_cast<int>(c),
                hidden.data() + pos * c, 1, 1.0f, s.logits.data(), 1);
    out.push_back(std::move(s));
  }
  return out;
}

int64_t RankOf(const std::vector<float>& logits, int32_t token) {
  const float target = logits[static_cast<size_t>(token)];
  int64_t rank = 1;
  for (size_t t = 0; t < logits.size(); ++t) {
    if (static_cast<int32_t>(t) != token && logits[t] >= target) ++rank;
  }
  return rank;
}

}  // namespace neodb::encoder::train
