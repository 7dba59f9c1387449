#include "engine/model_registry.h"

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "spdlog/spdlog.h"

namespace neodb::engine {

ModelRegistry::ModelRegistry(EmbedderFactory factory, const ModelRegistryOptions& options)
    : factory_(std::move(factory)), options_(options) {}

ModelRegistry::~ModelRegistry() { Clear(); }

std::shared_ptr<Model> ModelRegistry::Wrap(std::unique_ptr<Embedder> e, const std::string& dir,
                                           encoder::Precision precision) const {
  auto m = std::make_shared<Model>();
  m->dir = dir;
  m->precision = precision;
  m->embedder = std::move(e);
  m->batcher = std::make_unique<EmbedBatcher>(m->embedder.get(), options_.batcher);
  return m;
}

std::shared_ptr<Model> ModelRegistry::SetDefault(std::unique_ptr<Embedder> embedder,
                                                 const std::string& dir,
                                                 encoder::Precision precision) {
  auto m = Wrap(std::move(embedder), dir, precision);
  std::lock_guard<std::mutex> lock(mu_);
  if (default_) bytes_ -= default_->embedder->memory_bytes();
  default_ = m;
  bytes_ += m->embedder->memory_bytes();
  EvictLocked();
  return m;
}

std::shared_ptr<Model> ModelRegistry::Default() const {
  std::lock_guard<std::mutex> lock(mu_);
  return default_;
}

bool ModelRegistry::IsDefaultLocked(const std::string& dir, encoder::Precision precision) const {
  // Asked for, or what it runs (a collection records the latter).
  return default_ && (dir.empty() || dir == default_->dir) &&
         (precision == default_->precision || precision == default_->embedder->precision());
}

absl::StatusOr<std::shared_ptr<Model>> ModelRegistry::Acquire(const std::string& dir,
                                                              const std::string& model_id,
                                                              encoder::Precision precision) {
  std::shared_ptr<Model> m;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (closed_) return absl::UnavailableError("server is shutting down");
    if (IsDefaultLocked(dir, precision)) {
      m = default_;
    } else if (auto it = by_dir_.find(Key{dir, precision}); it != by_dir_.end()) {
      m = it->second;
      TouchLocked(it->first);
    }
  }
  if (!m && dir.empty()) {
    if (!Default()) return absl::UnavailableError("server is shutting down");
    return absl::FailedPreconditionError(absl::StrCat(
        "it holds ", std::string(encoder::PrecisionName(precision)),
        " vectors and records no checkpoint directory, so the server's default model cannot be "
        "loaded again in that precision; reindex it with `--model DIR`"));
  }
  if (!m) {
    ASSIGN_OR_RETURN(m, Load(dir, precision));
  }
  if (m->embedder->model_id() != model_id) {
    if (dir.empty()) {
      return absl::FailedPreconditionError(
          absl::StrCat("it holds vectors of model ", model_id,
                       " but the server's default model is ", m->embedder->model_id(),
                       " and the collection records no checkpoint "
                       "directory; reindex it with `--model DIR`, naming its checkpoint"));
    }
    return absl::FailedPreconditionError(
        absl::StrCat("it holds vectors of model ", model_id, " from ", dir,
                     ", but that checkpoint is now model ", m->embedder->model_id(),
                     "; restore the checkpoint or reindex with `--model DIR`"));
  }
  return m;
}

absl::StatusOr<std::shared_ptr<Model>> ModelRegistry::Load(const std::string& dir,
                                                           encoder::Precision precision) {
  const Key key{dir, precision};
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (closed_) return absl::UnavailableError("server is shutting down");
    if (!dir.empty() && IsDefaultLocked(dir, precision)) return default_;
    if (auto it = by_dir_.find(key); it != by_dir_.end()) {
      TouchLocked(key);
      return it->second;
    }
  }
  if (dir.empty()) return absl::InvalidArgumentError("model directory is empty");
  if (!factory_) {
    return absl::FailedPreconditionError(
        absl::StrCat("this server cannot load other models (", dir, ")"));
  }
  auto e = factory_(dir, precision);
  if (!e.ok()) {
    return absl::FailedPreconditionError(
        absl::StrCat("cannot load the model in ", dir, ": ", e.status().message()));
  }
  auto m = Wrap(std::move(*e), dir, precision);
  spdlog::info("loaded model {} from {} ({}, runs {})", m->embedder->model_id(), dir,
               encoder::PrecisionName(precision),
               encoder::PrecisionName(m->embedder->precision()));
  std::lock_guard<std::mutex> lock(mu_);
  if (closed_) return absl::UnavailableError("server is shutting down");
  if (auto it = by_dir_.find(key); it != by_dir_.end()) return it->second;  // lost a race
  by_dir_[key] = m;
  lru_.push_front(key);
  bytes_ += m->embedder->memory_bytes();
  EvictLocked();
  return m;
}

void ModelRegistry::TouchLocked(const Key& key) {
  lru_.remove(key);
  lru_.push_front(key);
}

void ModelRegistry::EvictLocked() {
  // Never the most recently used one: the caller is about to use it.
  while (bytes_ > options_.max_bytes && lru_.size() > 1) {
    const Key victim = lru_.back();
    lru_.pop_back();
    auto it = by_dir_.find(victim);
    bytes_ -= it->second->embedder->memory_bytes();
    spdlog::info("unloading model {} ({}, {}): over the {} byte model cap",
                 it->second->embedder->model_id(), victim.first,
                 encoder::PrecisionName(victim.second), options_.max_bytes);
    by_dir_.erase(it);  // alive while a caller holds it
  }
}

size_t ModelRegistry::loaded() const {
  std::lock_guard<std::mutex> lock(mu_);
  return by_dir_.size() + (default_ ? 1 : 0);
}

size_t ModelRegistry::loaded_bytes() const {
  std::lock_guard<std::mutex> lock(mu_);
  return bytes_;
}

void ModelRegistry::Clear() {
  std::map<Key, std::shared_ptr<Model>> models;
  std::shared_ptr<Model> def;
  {
    std::lock_guard<std::mutex> lock(mu_);
    closed_ = true;
    models.swap(by_dir_);
    def.swap(default_);
    lru_.clear();
    bytes_ = 0;
  }
  // Destroyed here, outside the lock (batchers join their workers).
}

}  // namespace neodb::engine
