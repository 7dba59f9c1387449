#pragma once
// FakeEmbedder: a deterministic Embedder for tests and benchmarks of the
// layers above the encoder. A text becomes the sum of one pseudo-random unit
// vector per whitespace-separated word (seeded by the word and the model
// seed), so texts sharing words are close and identical texts are equal.
// Tokens are words + 2 ([CLS], [SEP]); long texts chunk into windows of
// max_tokens - 2 words, each window's vector the sum of its words. The model id names the seed, so
// two fakes with different seeds are different "models".
//
// Thread-safe. Embed can be slowed down (delay per call) to test queueing.

#include <atomic>
#include <string>

#include "absl/time/time.h"
#include "engine/embedder.h"

namespace neodb::engine {

class FakeEmbedder : public Embedder {
 public:
  FakeEmbedder(int dim, int max_tokens, uint64_t seed = 1);

  const std::string& model_id() const override { return model_id_; }
  int dim() const override { return dim_; }
  int max_tokens() const override { return max_tokens_; }
  absl::StatusOr<int> CountTokens(std::string_view prefix, std::string_view text) const override;
  absl::StatusOr<std::vector<encoder::Embedding>> Embed(
      const std::vector<std::string>& texts, const encoder::EmbedOptions& options) override;
  absl::StatusOr<encoder::FramedTexts> Frame(const std::vector<std::string>& texts,
                                             const encoder::EmbedOptions& options) const override;
  absl::StatusOr<std::vector<float>> Pool(const std::vector<std::vector<int32_t>>& sequences,
                                          encoder::Pooling pooling) override;

  // Every Embed call sleeps this long first. Default: none.
  void set_delay(absl::Duration d) { delay_ns_ = absl::ToInt64Nanoseconds(d); }
  // Number of Pool calls so far (one per batch; Embed makes one).
  int64_t calls() const { return calls_; }

 private:
  int dim_;
  int max_tokens_;
  uint64_t seed_;
  std::string model_id_;
  std::atomic<int64_t> delay_ns_{0};
  std::atomic<int64_t> calls_{0};
};

}  // namespace neodb::engine
