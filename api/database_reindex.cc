// Database::Reindex: re-embed every stored text (with a new model when given)
// beside the live index, then commit in one store batch and swap.
//
// Staging: the new vectors live in memory, keyed by document id and tagged
// with the target model id, until the commit; nothing reaches the store
// before it, so a crash during a reindex leaves the old vectors and index
// serving. The commit writes every document with its new vector and model id
// in ONE Store::Upsert batch, then the collection's model id (a second batch;
// Database::LoadCollection rolls a crash between the two forward). Searches
// are answered from the old index until the commit, and wait (commit_mu)
// while it runs, because internal ids change there.
#include <filesystem>

#include "absl/strings/str_cat.h"
#include "api/database.h"
#include "api/database_internal.h"
#include "index/index_factory.h"
#include "spdlog/spdlog.h"

namespace neodb::api {

absl::Status Database::Reindex(const std::string& collection, const std::string& model_dir) {
  ASSIGN_OR_RETURN(std::shared_ptr<Collection> c, Find(collection));
  if (!model_dir.empty() && !options_.embedder_factory) {
    return absl::FailedPreconditionError("this server cannot load other models");
  }
  {
    std::lock_guard<std::mutex> lock(c->reindex_mu);
    if (c->reindex.state == ReindexProgress::State::kRunning) {
      return absl::FailedPreconditionError(
          absl::StrCat("collection '", collection, "' is already being reindexed"));
    }
    c->reindex = ReindexProgress();
    c->reindex.state = ReindexProgress::State::kRunning;
  }
  std::lock_guard<std::mutex> lock(reindex_mu_);
  ++reindex_running_;
  reindex_threads_.emplace_back([this, c, model_dir] { ReindexJob(c, model_dir); });
  return absl::OkStatus();
}

void Database::ReindexJob(std::shared_ptr<Collection> c, std::string model_dir) {
  absl::Status s = ReindexRun(*c, model_dir);
  if (!s.ok()) spdlog::error("reindex of '{}' failed: {}", c->spec.name, s.ToString());
  {
    std::lock_guard<std::mutex> lock(c->reindex_mu);
    c->reindex.state = s.ok() ? ReindexProgress::State::kDone : ReindexProgress::State::kFailed;
    c->reindex.error = std::string(s.message());
  }
  std::lock_guard<std::mutex> lock(reindex_mu_);
  --reindex_running_;
  reindex_cv_.notify_all();
}

void Database::WaitForReindex() const {
  std::unique_lock<std::mutex> lock(reindex_mu_);
  reindex_cv_.wait(lock, [&] { return reindex_running_ == 0; });
}

absl::StatusOr<ReindexProgress> Database::GetReindexProgress(const std::string& collection) const {
  ASSIGN_OR_RETURN(std::shared_ptr<Collection> c, Find(collection));
  std::lock_guard<std::mutex> lock(c->reindex_mu);
  return c->reindex;
}

absl::Status Database::ReindexRun(Collection& c, const std::string& model_dir) {
  std::shared_ptr<Model> serving = model();
  if (!serving) return absl::UnavailableError("server is shutting down");
  db::CollectionSpec spec;
  {
    std::shared_lock<std::shared_mutex> lock(c.mu);
    spec = c.spec;
  }
  std::unique_ptr<Embedder> fresh;
  if (!model_dir.empty()) {
    ASSIGN_OR_RETURN(fresh, options_.embedder_factory(model_dir));
    if (fresh->dim() != static_cast<int>(spec.dimension)) {
      return absl::FailedPreconditionError(
          absl::StrCat("model in ", model_dir, " has dimension ", fresh->dim(), "; collection '",
                       spec.name, "' has ", spec.dimension, " (create a new collection instead)"));
    }
  }
  Embedder* target = fresh ? fresh.get() : serving->embedder.get();
  const std::string target_id = target->model_id();
  {
    std::lock_guard<std::mutex> lock(c.reindex_mu);
    c.reindex.model_id = target_id;
  }
  const encoder::EmbedOptions opts = EmbedOptionsFor(spec, spec.document_instruction);
  // The serving embedder is only ever driven by its batcher's worker.
  auto embed = [&](std::vector<std::string> texts) {
    if (fresh) return fresh->Embed(texts, opts);
    return serving->batcher->Embed(std::move(texts), opts, absl::InfiniteFuture());
  };

  uint64_t pin;
  {
    std::lock_guard<std::mutex> lock(write_mu_);
    pin = applied_seq_;
    pins_.insert(pin);
  }
  struct Unpin {
    Database* d;
    uint64_t pin;
    bool done = false;
    void Release() {
      if (!done) d->pins_.erase(d->pins_.find(pin));
      done = true;
    }
    ~Unpin() {
      if (!done) {
        std::lock_guard<std::mutex> lock(d->write_mu_);
        Release();
      }
    }
  } unpin{this, pin};

  // Stage 1: scan and re-embed, beside the live index.
  std::map<std::string, db::Document> staged;
  uint64_t covered = 0;
  RETURN_IF_ERROR(store_->ScanDocuments(
      spec.name,
      [&](const db::Document& d) {
        db::Document copy = d;
        copy.vector.clear();
        staged.emplace(d.id, std::move(copy));
        return absl::OkStatus();
      },
      &covered));
  {
    std::lock_guard<std::mutex> lock(c.reindex_mu);
    c.reindex.total = staged.size();
  }
  auto embed_staged = [&](std::vector<db::Document*>& batch) -> absl::Status {
    std::vector<std::string> texts;
    for (auto* d : batch) texts.push_back(d->text);
    ASSIGN_OR_RETURN(std::vector<encoder::Embedding> e, embed(std::move(texts)));
    for (size_t i = 0; i < batch.size(); ++i) {
      batch[i]->vector = std::move(e[i].vector);
      batch[i]->model_id = target_id;
    }
    batch.clear();
    return absl::OkStatus();
  };
  std::vector<db::Document*> batch;
  uint64_t done = 0;
  for (auto& [id, d] : staged) {
    batch.push_back(&d);
    if (batch.size() == 64) {
      RETURN_IF_ERROR(embed_staged(batch));
      done += 64;
      std::lock_guard<std::mutex> lock(c.reindex_mu);
      c.reindex.done = done;
    }
    {
      std::lock_guard<std::mutex> lock(maint_mu_);
      if (stop_) return absl::CancelledError("server is shutting down");
    }
  }
  if (!batch.empty()) RETURN_IF_ERROR(embed_staged(batch));

  // Stage 2: commit. Writes are held still; changes since the scan are staged
  // too, then everything goes to the store in one batch.
  std::lock_guard<std::mutex> wlock(write_mu_);
  unpin.Release();
  {
    std::shared_lock<std::shared_mutex> cl(collections_mu_);
    auto it = collections_.find(spec.name);
    if (it == collections_.end() || it->second.get() != &c) {
      return absl::AbortedError("collection was dropped during the reindex");
    }
  }
  std::set<std::string> changed;
  absl::Status rs = store_->ReadChangelog(covered + 1, [&](const db::ChangelogRecord& r) {
    if (r.seq > applied_seq_) return absl::CancelledError("done");
    if (r.collection == spec.name && !r.doc_id.empty()) changed.insert(r.doc_id);
    return absl::OkStatus();
  });
  if (!rs.ok() && !absl::IsCancelled(rs)) return rs;
  for (const std::string& id : changed) {
    auto d = store_->Get(spec.name, id);
    if (absl::IsNotFound(d.status())) {
      staged.erase(id);
      continue;
    }
    RETURN_IF_ERROR(d.status());
    db::Document& s = staged[id];
    s = std::move(*d);
    batch.push_back(&s);
  }
  if (!batch.empty()) {
    // Under write_mu_: few documents (those written during the reindex).
    std::vector<std::string> texts;
    for (auto* d : batch) texts.push_back(d->text);
    auto e = fresh ? fresh->Embed(texts, opts)
                   : serving->batcher->Embed(std::move(texts), opts, absl::InfiniteFuture());
    RETURN_IF_ERROR(e.status());
    for (size_t i = 0; i < batch.size(); ++i) {
      batch[i]->vector = std::move((*e)[i].vector);
      batch[i]->model_id = target_id;
    }
    batch.clear();
  }
  std::vector<db::Document> docs;
  docs.reserve(staged.size());
  for (auto& [id, d] : staged) docs.push_back(std::move(d));
  staged.clear();

  std::unique_lock<std::shared_mutex> commit(c.commit_mu);
  if (!docs.empty()) RETURN_IF_ERROR(store_->Upsert(spec.name, std::move(docs)).status());
  db::CollectionUpdate u;
  u.model_id = target_id;
  ASSIGN_OR_RETURN(db::CollectionSpec updated, store_->UpdateCollection(spec.name, u));
  {
    std::unique_lock<std::shared_mutex> lock(c.mu);
    c.spec = updated;
  }
  // New internal ids: build the new index from the store (the old one keeps
  // serving nobody meanwhile: searches wait on commit_mu).
  RETURN_IF_ERROR(RebuildIndex(c, /*background=*/false));
  applied_seq_ = store_->LastSequence();
  if (fresh) {
    auto m = std::make_shared<Model>();
    m->embedder = std::move(fresh);
    m->batcher = std::make_unique<EmbedBatcher>(m->embedder.get(), options_.batcher);
    std::lock_guard<std::mutex> lock(model_mu_);
    model_ = std::move(m);
    spdlog::info("now serving model {} (collections on other models need a reindex)", target_id);
  }
  commit.unlock();
  {
    std::lock_guard<std::mutex> lock(c.reindex_mu);
    c.reindex.done = c.reindex.total;
  }
  return SnapshotLocked().status();
}

}  // namespace neodb::api
