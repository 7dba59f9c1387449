#pragma once
// ModelRegistry: the encoders a database serves, one per checkpoint, shared by
// every collection embedded with it. A collection names its model by
// checkpoint directory and content hash (db::CollectionSpec::model_dir /
// model_id); Acquire loads the checkpoint on first use, checks that its hash
// is still the one the collection's vectors came from, and returns the loaded
// model, with the batcher that drives it.
//
// Memory: the registry keeps models up to `max_bytes` (Embedder::memory_bytes)
// and drops the least recently used ones past that. A dropped model stays
// alive while a caller still holds it (shared_ptr) and is reloaded on next
// use. The default model (the server's --model) is pinned: never dropped.
//
// Thread-safety: every method is safe to call concurrently. Loading a model
// happens outside the registry's lock, so one slow load never blocks users of
// other models; two first uses of one checkpoint may both load it, and the
// second result is discarded.

#include <cstdint>
#include <functional>
#include <list>
#include <map>
#include <memory>
#include <mutex>
#include <string>

#include "absl/status/statusor.h"
#include "engine/embed_batcher.h"
#include "engine/embedder.h"

namespace neodb::engine {

// Opens the checkpoint in a directory with the CPU matmuls in `precision`
// (EncoderEmbedder in the server; fakes in tests).
using EmbedderFactory = std::function<absl::StatusOr<std::unique_ptr<Embedder>>(
    const std::string& model_dir, encoder::Precision precision)>;

// A loaded model. Destruction order matters: the batcher (declared last)
// stops its worker before the embedder it drives goes away.
struct Model {
  std::string dir;  // checkpoint directory ("" for an unnamed default)
  // The precision it was asked for (the registry's key with `dir`);
  // embedder->precision() is what it runs, kF32 where the CPU lacks it.
  encoder::Precision precision = encoder::Precision::kF32;
  std::unique_ptr<Embedder> embedder;
  std::unique_ptr<EmbedBatcher> batcher;
};

struct ModelRegistryOptions {
  // Models kept loaded, in bytes of weights; the least recently used past it
  // are dropped (the pinned default model counts but is never dropped).
  // Default: 8 GiB.
  size_t max_bytes = size_t{8} << 30;
  EmbedBatcherOptions batcher;
};

class ModelRegistry {
 public:
  // `factory` may be empty: then only the default model is available.
  ModelRegistry(EmbedderFactory factory, const ModelRegistryOptions& options);
  ~ModelRegistry();

  // Makes `embedder` (loaded from `dir`, which may be empty) the default
  // model: what new collections and the Embed service use. Pinned.
  std::shared_ptr<Model> SetDefault(std::unique_ptr<Embedder> embedder, const std::string& dir,
                                    encoder::Precision precision = encoder::Precision::kF32);
  std::shared_ptr<Model> Default() const;

  // The model loaded from `dir` in `precision` whose content hash is
  // `model_id`: one copy per (checkpoint, precision), since the precision
  // changes the vectors. An empty `dir` names the default model. FAILED_PRECONDITION when the checkpoint's
  // hash is not `model_id` (the files changed since the collection was
  // embedded) or when the model cannot be loaded here.
  absl::StatusOr<std::shared_ptr<Model>> Acquire(
      const std::string& dir, const std::string& model_id,
      encoder::Precision precision = encoder::Precision::kF32);
  // Loads `dir` in `precision` (whatever its hash) for a reindex onto it.
  absl::StatusOr<std::shared_ptr<Model>> Load(
      const std::string& dir, encoder::Precision precision = encoder::Precision::kF32);

  // Models held now, and their bytes.
  size_t loaded() const;
  size_t loaded_bytes() const;
  // Drops every model (shutdown). Later calls fail with UNAVAILABLE.
  void Clear();

 private:
  using Key = std::pair<std::string, encoder::Precision>;  // (dir, precision)
  std::shared_ptr<Model> Wrap(std::unique_ptr<Embedder> e, const std::string& dir,
                              encoder::Precision precision) const;
  // REQUIRES: mu_ held. Whether the default model serves (dir, precision).
  bool IsDefaultLocked(const std::string& dir, encoder::Precision precision) const;
  // REQUIRES: mu_ held. Moves `key` to the front and evicts past max_bytes.
  void TouchLocked(const Key& key);
  void EvictLocked();

  const EmbedderFactory factory_;
  const ModelRegistryOptions options_;
  mutable std::mutex mu_;
  bool closed_ = false;
  std::shared_ptr<Model> default_;
  std::map<Key, std::shared_ptr<Model>> by_dir_;
  std::list<Key> lru_;  // most recent first; not the default
  size_t bytes_ = 0;
};

}  // namespace neodb::engine
