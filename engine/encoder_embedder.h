#pragma once
// EncoderEmbedder: the Embedder over the real encoder::Encoder.
// Thread-safety: as Embedder; the Encoder serialises forward passes itself.

#include <memory>

#include "engine/embedder.h"
#include "encoder/encoder.h"

namespace neodb::engine {

class EncoderEmbedder : public Embedder {
 public:
  explicit EncoderEmbedder(std::unique_ptr<encoder::Encoder> encoder)
      : encoder_(std::move(encoder)) {}
  // Opens the checkpoint directory `dir` (weights, config, tokenizer).
  static absl::StatusOr<std::unique_ptr<Embedder>> Open(const std::string& dir,
                                                        const encoder::EncoderOptions& options);

  const std::string& model_id() const override { return encoder_->model_id(); }
  encoder::ModelDefaults defaults() const override { return encoder_->defaults(); }
  int dim() const override { return static_cast<int>(encoder_->dim()); }
  int max_tokens() const override { return static_cast<int>(encoder_->max_length()); }
  absl::StatusOr<int> CountTokens(std::string_view prefix, std::string_view text) const override;
  // Parameters (from the config) times 4 bytes: the weights as the CPU
  // backend holds them.
  size_t memory_bytes() const override;
  std::string device() const override;
  encoder::Precision precision() const override { return encoder_->precision(); }
  absl::StatusOr<std::vector<encoder::Embedding>> Embed(
      const std::vector<std::string>& texts, const encoder::EmbedOptions& options) override {
    return encoder_->Embed(texts, options);
  }
  absl::StatusOr<encoder::FramedTexts> Frame(const std::vector<std::string>& texts,
                                             const encoder::EmbedOptions& options) const override {
    return encoder_->Frame(texts, options);
  }
  absl::StatusOr<std::vector<float>> Pool(const std::vector<std::vector<int32_t>>& sequences,
                                          encoder::Pooling pooling) override;

 private:
  std::unique_ptr<encoder::Encoder> encoder_;
};

}  // namespace neodb::engine
