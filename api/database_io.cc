// Database: the write path (upsert, delete) and the read path (get, list,
// near-text, near-vector, embed).
#include <algorithm>
#include <cmath>

#include "absl/strings/str_cat.h"
#include "api/database.h"
#include "api/database_internal.h"
#include "api/text_checks.h"

namespace neodb::api {
namespace {

absl::Status ModelMismatch(const db::CollectionSpec& spec, const std::string& serving) {
  return absl::FailedPreconditionError(
      absl::StrCat("collection '", spec.name, "' holds vectors of model ", spec.model_id,
                   " but the server runs model ", serving, "; run `neodb reindex --collection ",
                   spec.name, "` (or serve the collection's model)"));
}

}  // namespace

absl::Status Database::CatchUpLocked() {
  const uint64_t last = store_->LastSequence();
  if (last <= applied_seq_) return absl::OkStatus();
  // Per collection: removals and additions in log order, netted so that an id
  // added and removed within the range never reaches the index.
  struct Pending {
    std::vector<int64_t> remove;
    std::map<int64_t, std::vector<float>> add;
    std::map<int64_t, db::Metadata> meta;
  };
  std::map<std::string, Pending> pending;
  std::map<std::string, std::shared_ptr<Collection>> cols;
  {
    std::shared_lock<std::shared_mutex> lock(collections_mu_);
    cols = collections_;
  }
  absl::Status s = store_->ReadChangelog(applied_seq_ + 1, [&](const db::ChangelogRecord& r) {
    if (r.seq > last) return absl::CancelledError("done");
    if (!cols.count(r.collection)) return absl::OkStatus();
    if (r.op != db::ChangeOp::kUpsert && r.op != db::ChangeOp::kDelete) return absl::OkStatus();
    Pending& p = pending[r.collection];
    if (r.previous_internal_id != 0) {
      int64_t prev = static_cast<int64_t>(r.previous_internal_id);
      if (p.add.erase(prev) == 0) p.remove.push_back(prev);
      p.meta.erase(prev);
    }
    if (r.op == db::ChangeOp::kUpsert) {
      auto doc = store_->GetByInternalId(r.collection, r.internal_id);
      if (absl::IsNotFound(doc.status())) return absl::OkStatus();  // superseded later
      RETURN_IF_ERROR(doc.status());
      int64_t id = static_cast<int64_t>(r.internal_id);
      p.add[id] = std::move(doc->vector);
      p.meta[id] = std::move(doc->metadata);
    }
    return absl::OkStatus();
  });
  if (!s.ok() && !absl::IsCancelled(s)) return s;
  absl::Status result;
  for (auto& [name, p] : pending) {
    Collection& c = *cols[name];
    std::shared_ptr<index::VectorIndex> idx;
    {
      std::unique_lock<std::shared_mutex> lock(c.mu);
      idx = c.index;
      for (int64_t id : p.remove) c.metadata.erase(id);
      for (auto& [id, m] : p.meta) c.metadata[id] = std::move(m);
    }
    absl::Status st;
    if (!p.remove.empty()) st = idx->Remove(p.remove).status();
    if (st.ok() && !p.add.empty()) {
      std::vector<int64_t> ids;
      std::vector<float> vecs;
      ids.reserve(p.add.size());
      for (auto& [id, v] : p.add) {
        ids.push_back(id);
        vecs.insert(vecs.end(), v.begin(), v.end());
      }
      st = idx->Add(ids, vecs);
    }
    if (!st.ok()) {
      // The store committed; the index is derived. Rebuild it in the background.
      c.needs_rebuild = true;
      result = absl::InternalError(absl::StrCat("index update of collection '", name,
                                                "' failed (it will be rebuilt): ", st.message()));
    }
  }
  applied_seq_ = last;
  return result;
}

absl::StatusOr<std::vector<std::string>> Database::Upsert(const std::string& collection,
                                                          std::vector<DocumentInput> docs,
                                                          absl::Time deadline, int64_t* tokens) {
  if (docs.empty()) return absl::InvalidArgumentError("no documents to upsert");
  ASSIGN_OR_RETURN(std::shared_ptr<Collection> c, Find(collection));
  db::CollectionSpec spec;
  {
    std::shared_lock<std::shared_mutex> lock(c->mu);
    spec = c->spec;
  }
  auto m = model();
  if (!m) return absl::UnavailableError("server is shutting down");
  if (m->embedder->model_id() != spec.model_id) return ModelMismatch(spec, m->embedder->model_id());

  std::vector<std::string> ids;
  std::vector<std::string> texts;
  ids.reserve(docs.size());
  texts.reserve(docs.size());
  for (size_t i = 0; i < docs.size(); ++i) {
    DocumentInput& d = docs[i];
    if (d.id.empty()) d.id = GenerateDocumentId();
    if (absl::Status s = CheckDocumentId(d.id); !s.ok()) {
      return absl::InvalidArgumentError(absl::StrCat("document #", i, ": ", s.message()));
    }
    const std::string what = absl::StrCat("document '", d.id, "': text");
    RETURN_IF_ERROR(CheckText(what, d.text));
    if (absl::Status s = db::ValidateMetadata(d.metadata); !s.ok()) {
      return absl::InvalidArgumentError(absl::StrCat("document '", d.id, "': ", s.message()));
    }
    if (spec.overflow != "chunk") {
      ASSIGN_OR_RETURN(int n, m->embedder->CountTokens(spec.document_instruction, d.text));
      if (n > m->embedder->max_tokens()) {
        return absl::InvalidArgumentError(
            absl::StrCat(what, " has ", n, " tokens, over the model's maximum of ",
                         m->embedder->max_tokens(), " (collection '", spec.name,
                         "' rejects long texts; create it with overflow=chunk to "
                         "split them)"));
      }
    }
    ids.push_back(d.id);
    texts.push_back(d.text);
  }
  ASSIGN_OR_RETURN(std::vector<encoder::Embedding> embeddings,
                   m->batcher->Embed(std::move(texts),
                                     EmbedOptionsFor(spec, spec.document_instruction), deadline));
  std::vector<db::Document> out;
  out.reserve(docs.size());
  int64_t total_tokens = 0;
  for (size_t i = 0; i < docs.size(); ++i) {
    db::Document d;
    d.id = std::move(docs[i].id);
    d.text = std::move(docs[i].text);
    d.metadata = std::move(docs[i].metadata);
    d.vector = std::move(embeddings[i].vector);
    d.model_id = spec.model_id;
    total_tokens += embeddings[i].num_tokens;
    out.push_back(std::move(d));
  }
  if (tokens) *tokens = total_tokens;

  std::lock_guard<std::mutex> wlock(write_mu_);
  // The collection may have been dropped, re-created or reindexed to another
  // model while we embedded.
  ASSIGN_OR_RETURN(std::shared_ptr<Collection> now, Find(collection));
  {
    std::shared_lock<std::shared_mutex> lock(now->mu);
    if (now != c || now->spec.model_id != spec.model_id) {
      return absl::AbortedError(absl::StrCat("collection '", collection,
                                             "' changed (dropped or reindexed) during the "
                                             "upsert; retry"));
    }
  }
  RETURN_IF_ERROR(store_->Upsert(collection, std::move(out)).status());
  RETURN_IF_ERROR(CatchUpLocked());
  return ids;
}

absl::StatusOr<uint64_t> Database::Delete(const std::string& collection,
                                          const std::vector<std::string>& ids) {
  ASSIGN_OR_RETURN(std::shared_ptr<Collection> c, Find(collection));
  for (const auto& id : ids) RETURN_IF_ERROR(CheckDocumentId(id));
  std::lock_guard<std::mutex> wlock(write_mu_);
  ASSIGN_OR_RETURN(std::vector<uint64_t> seqs, store_->Delete(collection, ids));
  RETURN_IF_ERROR(CatchUpLocked());
  return seqs.size();
}

absl::StatusOr<std::vector<std::optional<db::Document>>> Database::Get(
    const std::string& collection, const std::vector<std::string>& ids) const {
  ASSIGN_OR_RETURN(std::shared_ptr<Collection> c, Find(collection));
  std::vector<std::optional<db::Document>> out;
  for (const auto& id : ids) {
    RETURN_IF_ERROR(CheckDocumentId(id));
    auto d = store_->Get(collection, id);
    if (absl::IsNotFound(d.status())) {
      out.push_back(std::nullopt);
      continue;
    }
    RETURN_IF_ERROR(d.status());
    out.push_back(std::move(*d));
  }
  return out;
}

absl::StatusOr<db::ListResult> Database::List(const std::string& collection,
                                              const std::string& page_token, size_t limit) const {
  ASSIGN_OR_RETURN(std::shared_ptr<Collection> c, Find(collection));
  return store_->List(collection, page_token, limit);
}

absl::StatusOr<SearchResult> Database::NearText(const std::string& collection,
                                                const std::string& query,
                                                const std::optional<std::string>& instruction,
                                                const SearchQuery& q, absl::Time deadline) const {
  ASSIGN_OR_RETURN(std::shared_ptr<Collection> c, Find(collection));
  RETURN_IF_ERROR(CheckText("query", query));
  db::CollectionSpec spec;
  {
    std::shared_lock<std::shared_mutex> lock(c->mu);
    spec = c->spec;
  }
  auto m = model();
  if (!m) return absl::UnavailableError("server is shutting down");
  if (m->embedder->model_id() != spec.model_id) return ModelMismatch(spec, m->embedder->model_id());
  const std::string prefix = instruction ? *instruction : spec.query_instruction;
  if (instruction && !instruction->empty()) RETURN_IF_ERROR(CheckText("instruction", *instruction));
  if (spec.overflow != "chunk") {
    ASSIGN_OR_RETURN(int n, m->embedder->CountTokens(prefix, query));
    if (n > m->embedder->max_tokens()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "query has ", n, " tokens, over the model's maximum of ", m->embedder->max_tokens()));
    }
  }
  ASSIGN_OR_RETURN(std::vector<encoder::Embedding> e,
                   m->batcher->Embed({query}, EmbedOptionsFor(spec, prefix), deadline));
  return NearVector(collection, e[0].vector, q);
}

absl::StatusOr<SearchResult> Database::NearVector(const std::string& collection,
                                                  const std::vector<float>& vector,
                                                  const SearchQuery& q) const {
  ASSIGN_OR_RETURN(std::shared_ptr<Collection> c, Find(collection));
  if (q.k < 1 || q.k > 1000) {
    return absl::InvalidArgumentError(absl::StrCat("k is ", q.k, "; it must be in 1..1000"));
  }
  if (q.filter) RETURN_IF_ERROR(q.filter->Validate());
  std::shared_lock<std::shared_mutex> commit(c->commit_mu);
  db::CollectionSpec spec;
  {
    std::shared_lock<std::shared_mutex> lock(c->mu);
    spec = c->spec;
  }
  if (vector.size() != spec.dimension) {
    return absl::InvalidArgumentError(absl::StrCat("vector has ", vector.size(),
                                                   " values; collection '", collection,
                                                   "' has dimension ", spec.dimension));
  }
  for (float v : vector) {
    if (!std::isfinite(v)) return absl::InvalidArgumentError("vector holds a non-finite value");
  }
  SearchResult result;
  result.model_id = spec.model_id;
  // Hits can be dropped by verification (a concurrent overwrite or delete);
  // widen the search then, a bounded number of times.
  int want = q.k;
  for (int attempt = 0; attempt < 4; ++attempt) {
    std::vector<index::SearchHit> raw;
    {
      std::shared_lock<std::shared_mutex> lock(c->mu);
      std::optional<MetadataIdFilter> f;
      if (q.filter) f.emplace(c->metadata, *q.filter);
      ASSIGN_OR_RETURN(auto hits, c->index->Search(vector, want, f ? &*f : nullptr));
      raw = std::move(hits[0]);
    }
    result.hits.clear();
    for (const auto& h : raw) {
      auto d = store_->GetByInternalId(collection, static_cast<uint64_t>(h.id));
      if (absl::IsNotFound(d.status())) continue;  // overwritten or deleted meanwhile
      RETURN_IF_ERROR(d.status());
      if (d->model_id != spec.model_id) continue;  // never mix models
      if (q.filter && !q.filter->Matches(d->metadata)) continue;
      Hit hit;
      hit.id = std::move(d->id);
      hit.score = h.score;
      if (q.include_text) hit.text = std::move(d->text);
      if (q.include_metadata) hit.metadata = std::move(d->metadata);
      result.hits.push_back(std::move(hit));
      if (result.hits.size() == static_cast<size_t>(q.k)) break;
    }
    if (result.hits.size() == static_cast<size_t>(q.k) || raw.size() < static_cast<size_t>(want) ||
        want >= 10000) {
      break;
    }
    want = std::min(want * 2, 10000);
  }
  return result;
}

absl::StatusOr<std::vector<encoder::Embedding>> Database::Embed(
    std::vector<std::string> texts, const encoder::EmbedOptions& options,
    absl::Time deadline) const {
  if (texts.empty()) return absl::InvalidArgumentError("no texts to embed");
  for (size_t i = 0; i < texts.size(); ++i) {
    RETURN_IF_ERROR(CheckText(absl::StrCat("text #", i), texts[i]));
  }
  auto m = model();
  if (!m) return absl::UnavailableError("server is shutting down");
  if (options.overflow == encoder::Overflow::kError) {
    for (size_t i = 0; i < texts.size(); ++i) {
      ASSIGN_OR_RETURN(int n, m->embedder->CountTokens(options.prefix, texts[i]));
      if (n > m->embedder->max_tokens()) {
        return absl::InvalidArgumentError(absl::StrCat("text #", i, " has ", n,
                                                       " tokens, over the model's maximum of ",
                                                       m->embedder->max_tokens()));
      }
    }
  }
  return m->batcher->Embed(std::move(texts), options, deadline);
}

}  // namespace neodb::api
