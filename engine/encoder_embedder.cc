#include "engine/encoder_embedder.h"

#include "encoder/device.h"

namespace neodb::engine {

absl::StatusOr<std::unique_ptr<Embedder>> EncoderEmbedder::Open(
    const std::string& dir, const encoder::EncoderOptions& options) {
  ASSIGN_OR_RETURN(std::unique_ptr<encoder::Encoder> enc, encoder::Encoder::Open(dir, options));
  return std::unique_ptr<Embedder>(new EncoderEmbedder(std::move(enc)));
}

std::string EncoderEmbedder::device() const {
  return encoder::BackendDeviceName(encoder_->device(), encoder_->device_index());
}

size_t EncoderEmbedder::memory_bytes() const {
  // The F32 weights, whatever the architecture.
  return static_cast<size_t>(encoder_->model().parameter_count()) * sizeof(float);
}

absl::StatusOr<std::vector<float>> EncoderEmbedder::Pool(
    const std::vector<std::vector<int32_t>>& sequences, encoder::Pooling pooling) {
  ASSIGN_OR_RETURN(encoder::Tensor t, encoder_->EmbedIds(sequences, pooling, false));
  const float* p = t.data<float>();
  return std::vector<float>(p, p + t.numel());
}

absl::StatusOr<int> EncoderEmbedder::CountTokens(std::string_view prefix,
                                                 std::string_view text) const {
  // Pre-tokenisation splits on whitespace, so the prefix's tokens and the
  // text's add up (the encoder prepends the prefix to the text).
  size_t n = 2;  // [CLS], [SEP]
  if (!prefix.empty()) {
    ASSIGN_OR_RETURN(std::vector<int32_t> p, encoder_->tokenizer().Tokenize(prefix));
    n += p.size();
  }
  ASSIGN_OR_RETURN(std::vector<int32_t> t, encoder_->tokenizer().Tokenize(text));
  n += t.size();
  return static_cast<int>(n);
}

}  // namespace neodb::engine
