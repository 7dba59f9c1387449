#pragma once
// LazyEmbedder: an Embedder whose weights are loaded on first use.
//
// Why: the server's default model is what new collections get, but a server
// that stores the user's own vectors, or serves other models, never runs it.
// Held from start-up, its F32 weights (about 57 MiB for the shipped model,
// 0.9 GiB for NeoBERT itself) would be resident for nothing (bench/peers).
//
// Open() still loads the model once at start-up, so that a bad checkpoint
// stops the server there with the reason, and so that what the server reports
// and records (model id, dimension, token limit, device, precision, pooling
// defaults) comes from the model itself; then it lets the weights go. The
// first call that needs the model (CountTokens, Frame, Embed, Pool) loads it
// again, checks that it is still the model of start-up (same content hash and
// dimension: the files may have changed since) and keeps it.
//
// A load that fails is not remembered: the call gets the error, and the next
// call tries again (a restored file, memory freed).
//
// Thread-safety: as Embedder. The description is immutable; loading is
// serialised by a mutex, and a loaded model is published once and never
// replaced, so calls after the first take no lock.

#include <atomic>
#include <functional>
#include <memory>
#include <mutex>
#include <string>

#include "engine/embedder.h"

namespace neodb::engine {

class LazyEmbedder : public Embedder {
 public:
  // Opens the model: called once by Open, then on first use.
  using Loader = std::function<absl::StatusOr<std::unique_ptr<Embedder>>()>;

  // Runs `load` once to check the model and learn its description, then
  // releases it. `load`'s error, if it fails.
  static absl::StatusOr<std::unique_ptr<LazyEmbedder>> Open(Loader load);

  const std::string& model_id() const override { return model_id_; }
  int dim() const override { return dim_; }
  int max_tokens() const override { return max_tokens_; }
  // The loaded model's, whether it is loaded now or not: the registry's cap
  // counts the pinned default model either way.
  size_t memory_bytes() const override { return memory_bytes_; }
  std::string device() const override { return device_; }
  encoder::Precision precision() const override { return precision_; }
  encoder::ModelDefaults defaults() const override { return defaults_; }

  absl::StatusOr<int> CountTokens(std::string_view prefix, std::string_view text) const override;
  absl::StatusOr<std::vector<encoder::Embedding>> Embed(
      const std::vector<std::string>& texts, const encoder::EmbedOptions& options) override;
  absl::StatusOr<encoder::FramedTexts> Frame(const std::vector<std::string>& texts,
                                             const encoder::EmbedOptions& options) const override;
  absl::StatusOr<std::vector<float>> Pool(const std::vector<std::vector<int32_t>>& sequences,
                                          encoder::Pooling pooling) override;

  // Whether the weights are held now.
  bool loaded() const { return ready_.load(std::memory_order_acquire) != nullptr; }

 private:
  explicit LazyEmbedder(Loader load) : load_(std::move(load)) {}
  // The model, loading it if this is the first use.
  absl::StatusOr<Embedder*> Get() const;

  const Loader load_;
  // The description, from the load in Open.
  std::string model_id_;
  int dim_ = 0;
  int max_tokens_ = 0;
  size_t memory_bytes_ = 0;
  std::string device_;
  encoder::Precision precision_ = encoder::Precision::kF32;
  encoder::ModelDefaults defaults_;

  mutable std::mutex load_mu_;                      // serialises loads
  mutable std::unique_ptr<Embedder> model_;         // written once, under load_mu_
  mutable std::atomic<Embedder*> ready_{nullptr};   // model_.get() once loaded
};

}  // namespace neodb::engine
