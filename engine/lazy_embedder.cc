#include "engine/lazy_embedder.h"

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "spdlog/spdlog.h"

namespace neodb::engine {

absl::StatusOr<std::unique_ptr<LazyEmbedder>> LazyEmbedder::Open(Loader load) {
  std::unique_ptr<LazyEmbedder> lazy(new LazyEmbedder(std::move(load)));
  ASSIGN_OR_RETURN(std::unique_ptr<Embedder> model, lazy->load_());
  lazy->model_id_ = model->model_id();
  lazy->dim_ = model->dim();
  lazy->max_tokens_ = model->max_tokens();
  lazy->memory_bytes_ = model->memory_bytes();
  lazy->device_ = model->device();
  lazy->precision_ = model->precision();
  lazy->defaults_ = model->defaults();
  return lazy;  // `model` and its weights go here
}

absl::StatusOr<Embedder*> LazyEmbedder::Get() const {
  if (Embedder* m = ready_.load(std::memory_order_acquire)) return m;
  std::lock_guard<std::mutex> lock(load_mu_);
  if (Embedder* m = ready_.load(std::memory_order_acquire)) return m;  // another caller loaded it
  const absl::Time start = absl::Now();
  absl::StatusOr<std::unique_ptr<Embedder>> model = load_();
  if (!model.ok()) {
    return absl::FailedPreconditionError(absl::StrCat(
        "cannot load model ", model_id_, " on first use: ", model.status().message()));
  }
  // The vectors of collections made since start-up carry model_id_: a model
  // whose files changed since must not serve them.
  if ((*model)->model_id() != model_id_ || (*model)->dim() != dim_) {
    return absl::FailedPreconditionError(absl::StrCat(
        "the model's files changed since the server started: it was model ", model_id_,
        " (dimension ", dim_, ") and is now ", (*model)->model_id(), " (dimension ",
        (*model)->dim(), "); restore them or restart the server"));
  }
  model_ = std::move(*model);
  ready_.store(model_.get(), std::memory_order_release);
  spdlog::info("model {} loaded on first use ({:.0f} ms)", model_id_,
               absl::ToDoubleMilliseconds(absl::Now() - start));
  return model_.get();
}

absl::StatusOr<int> LazyEmbedder::CountTokens(std::string_view prefix,
                                              std::string_view text) const {
  ASSIGN_OR_RETURN(Embedder * m, Get());
  return m->CountTokens(prefix, text);
}

absl::StatusOr<std::vector<encoder::Embedding>> LazyEmbedder::Embed(
    const std::vector<std::string>& texts, const encoder::EmbedOptions& options) {
  ASSIGN_OR_RETURN(Embedder * m, Get());
  return m->Embed(texts, options);
}

absl::StatusOr<encoder::FramedTexts> LazyEmbedder::Frame(
    const std::vector<std::string>& texts, const encoder::EmbedOptions& options) const {
  ASSIGN_OR_RETURN(Embedder * m, Get());
  return m->Frame(texts, options);
}

absl::StatusOr<std::vector<float>> LazyEmbedder::Pool(
    const std::vector<std::vector<int32_t>>& sequences, encoder::Pooling pooling) {
  ASSIGN_OR_RETURN(Embedder * m, Get());
  return m->Pool(sequences, pooling);
}

}  // namespace neodb::engine
