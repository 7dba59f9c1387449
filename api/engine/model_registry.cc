#include "api/engine/model_registry.h"

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "spdlog/spdlog.h"

namespace neodb::engine {

ModelRegistry::ModelRegistry(EmbedderFactory factory, const ModelRegistryOptions& options)
    : factory_(std::move(factory)), options_(options) {}

ModelRegistry::~ModelRegistry() { Clear(); }

std::shared_ptr<Model> ModelRegistry::Wrap(std::unique_ptr<Embedder> e,
                                           const std::string& dir) const {
  auto m = std::make_shared<Model>();
  m->dir = dir;
  m->embedder = std::move(e);
  m->batcher = std::make_unique<EmbedBatcher>(m->embedder.get(), options_.batcher);
  return m;
}

std::shared_ptr<Model> ModelRegistry::SetDefault(std::unique_ptr<Embedder> embedder,
                                                 const std::string& dir) {
  auto m = Wrap(std::move(embedder), dir);
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

absl::StatusOr<std::shared_ptr<Model>> ModelRegistry::Acquire(const std::string& dir,
                                                              const std::string& model_id) {
  std::shared_ptr<Model> m;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (closed_) return absl::UnavailableError("server is shutting down");
    if (default_ && (dir.empty() || dir == default_->dir)) {
      m = default_;
    } else if (auto it = by_dir_.find(dir); it != by_dir_.end()) {
      m = it->second;
      TouchLocked(dir);
    }
  }
  if (!m && dir.empty()) return absl::UnavailableError("server is shutting down");
  if (!m) {
    ASSIGN_OR_RETURN(m, Load(dir));
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

absl::StatusOr<std::shared_ptr<Model>> ModelRegistry::Load(const std::string& dir) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (closed_) return absl::UnavailableError("server is shutting down");
    if (default_ && !dir.empty() && dir == default_->dir) return default_;
    if (auto it = by_dir_.find(dir); it != by_dir_.end()) {
      TouchLocked(dir);
      return it->second;
    }
  }
  if (dir.empty()) return absl::InvalidArgumentError("model directory is empty");
  if (!factory_) {
    return absl::FailedPreconditionError(
        absl::StrCat("this server cannot load other models (", dir, ")"));
  }
  auto e = factory_(dir);
  if (!e.ok()) {
    return absl::FailedPreconditionError(
        absl::StrCat("cannot load the model in ", dir, ": ", e.status().message()));
  }
  auto m = Wrap(std::move(*e), dir);
  spdlog::info("loaded model {} from {}", m->embedder->model_id(), dir);
  std::lock_guard<std::mutex> lock(mu_);
  if (closed_) return absl::UnavailableError("server is shutting down");
  if (auto it = by_dir_.find(dir); it != by_dir_.end()) return it->second;  // lost a race
  by_dir_[dir] = m;
  lru_.push_front(dir);
  bytes_ += m->embedder->memory_bytes();
  EvictLocked();
  return m;
}

void ModelRegistry::TouchLocked(const std::string& dir) {
  lru_.remove(dir);
  lru_.push_front(dir);
}

void ModelRegistry::EvictLocked() {
  // Never the most recently used one: the caller is about to use it.
  while (bytes_ > options_.max_bytes && lru_.size() > 1) {
    const std::string victim = lru_.back();
    lru_.pop_back();
    auto it = by_dir_.find(victim);
    bytes_ -= it->second->embedder->memory_bytes();
    spdlog::info("unloading model {} ({}): over the {} byte model cap",
                 it->second->embedder->model_id(), victim, options_.max_bytes);
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
  std::map<std::string, std::shared_ptr<Model>> models;
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
