// Database: the write path (upsert, delete) and the catch-up that carries
// each committed write into the indexes.
#include "absl/strings/str_cat.h"
#include "engine/change_replay.h"
#include "engine/database.h"
#include "engine/text_checks.h"
#include "engine/vector_checks.h"
#include "common/status_macros.h"

namespace neodb::engine {

absl::Status Database::CatchUpLocked() {
  const uint64_t last = store_->LastSequence();
  if (last <= applied_seq_) return absl::OkStatus();
  std::map<std::string, std::shared_ptr<Collection>> cols;
  {
    std::shared_lock<std::shared_mutex> lock(collections_mu_);
    cols = collections_;
  }
  absl::Status result;
  ReplaySink sink;
  sink.wants = [&](const std::string& name) { return cols.count(name) > 0; };
  sink.apply = [&](const std::string& name, std::span<const Change> changes) -> absl::Status {
    Collection& c = *cols[name];
    absl::Status st = c.state()->indexes->Apply(changes);
    if (!st.ok()) {
      // The store committed; the indexes are derived. Rebuild them in the background.
      c.needs_rebuild = true;
      result = absl::InternalError(absl::StrCat("index update of collection '", name,
                                                "' failed (it will be rebuilt): ", st.message()));
    }
    return absl::OkStatus();
  };
  RETURN_IF_ERROR(ReplayChanges(*store_, applied_seq_ + 1, last, sink).status());
  applied_seq_ = last;
  return result;
}

absl::StatusOr<std::vector<std::string>> Database::Upsert(const std::string& collection,
                                                          std::vector<DocumentInput> docs,
                                                          absl::Time deadline, int64_t* tokens,
                                                          const CancelCheck& cancelled) {
  if (docs.empty()) return absl::InvalidArgumentError("no documents to upsert");
  RETURN_IF_ERROR(memory_budget_->Admit("upsert"));
  ASSIGN_OR_RETURN(std::shared_ptr<Collection> c, Find(collection));
  std::shared_ptr<const Collection::State> state = c->state();
  const CollectionSettings& settings = state->settings;
  const db::CollectionSpec& spec = settings.spec;
  const bool external = settings.source == VectorSource::kExternal;
  // External vectors need no model (and the write must not fail for want of one).
  std::shared_ptr<Model> m;
  if (!external) {
    ASSIGN_OR_RETURN(m, ModelOf(*state));
  }

  // Bounds the encoder work of this request before any of it is queued.
  std::optional<RequestTokenBudget> budget;
  if (m) budget.emplace(*m->embedder, options_.max_request_tokens);
  std::vector<std::string> ids;
  std::vector<std::string> texts;     // the texts the model embeds
  std::vector<size_t> embedded_docs;  // which document each of `texts` is
  ids.reserve(docs.size());
  texts.reserve(docs.size());
  for (size_t i = 0; i < docs.size(); ++i) {
    DocumentInput& d = docs[i];
    if (d.id.empty()) d.id = GenerateDocumentId();
    if (absl::Status s = CheckDocumentId(d.id); !s.ok()) {
      return absl::InvalidArgumentError(absl::StrCat("document #", i, ": ", s.message()));
    }
    const std::string what = absl::StrCat("document '", d.id, "': text");
    if (absl::Status s = db::ValidateMetadata(d.metadata); !s.ok()) {
      return absl::InvalidArgumentError(absl::StrCat("document '", d.id, "': ", s.message()));
    }
    if (!d.vector_model_id.empty() && d.vector_model_id != spec.model_id) {
      return absl::InvalidArgumentError(absl::StrCat(
          "document '", d.id, "' carries a vector of '", d.vector_model_id, "', but collection '",
          spec.name, "' holds vectors of '", spec.model_id,
          "' (import without vectors to embed the texts with the collection's model)"));
    }
    if (external) {
      if (!d.vector) {
        return absl::InvalidArgumentError(
            absl::StrCat("document '", d.id, "' has no vector; collection '", spec.name,
                         "' takes client-supplied vectors of dimension ", spec.dimension));
      }
      const std::string vwhat = absl::StrCat("document '", d.id, "': vector");
      RETURN_IF_ERROR(CheckVector(vwhat, *d.vector, spec.dimension, spec.name));
      RETURN_IF_ERROR(CheckStorableVector(vwhat, *d.vector, settings.metric));
      // The text is optional here (nothing embeds it) but, when given, UTF-8.
      if (!d.text.empty()) RETURN_IF_ERROR(CheckText(what, d.text));
      ids.push_back(d.id);
      continue;
    }
    RETURN_IF_ERROR(CheckText(what, d.text));
    if (d.vector) {
      // A vector this collection's model made for this text (an export of a
      // collection on the same model): stored as sent, not embedded again.
      if (d.vector_model_id.empty()) {
        return absl::InvalidArgumentError(absl::StrCat(
            "document '", d.id, "' carries a vector, but collection '", spec.name,
            "' embeds its texts with its model; a vector is taken only with vector_model_id '",
            spec.model_id, "' (create a collection with external vectors to supply your own)"));
      }
      const std::string vwhat = absl::StrCat("document '", d.id, "': vector");
      RETURN_IF_ERROR(CheckVector(vwhat, *d.vector, spec.dimension, spec.name));
      RETURN_IF_ERROR(CheckStorableVector(vwhat, *d.vector, settings.metric));
      ids.push_back(d.id);
      continue;
    }
    RETURN_IF_ERROR(budget->Add(what, spec.document_instruction, d.text, settings.overflow,
                                absl::StrCat(" (collection '", spec.name,
                                             "' rejects long texts; create it with "
                                             "overflow=chunk to split them)")));
    ids.push_back(d.id);
    texts.push_back(d.text);
    embedded_docs.push_back(i);
  }
  std::vector<encoder::Embedding> embeddings;
  if (!texts.empty()) {
    const encoder::EmbedOptions options = EmbedOptionsFor(settings, spec.document_instruction);
    ASSIGN_OR_RETURN(embeddings, m->batcher->Embed(std::move(texts), options, deadline, cancelled));
  }
  int64_t total_tokens = 0;
  for (size_t j = 0; j < embeddings.size(); ++j) {
    docs[embedded_docs[j]].vector = std::move(embeddings[j].vector);
    total_tokens += embeddings[j].num_tokens;
  }
  std::vector<db::Document> out;
  out.reserve(docs.size());
  for (size_t i = 0; i < docs.size(); ++i) {
    db::Document d;
    d.id = std::move(docs[i].id);
    d.text = std::move(docs[i].text);
    d.metadata = std::move(docs[i].metadata);
    // Embedded here, or stored exactly as sent: include_vector returns these bits.
    d.vector = std::move(*docs[i].vector);
    d.model_id = spec.model_id;
    out.push_back(std::move(d));
  }
  if (tokens) *tokens = total_tokens;

  std::lock_guard<std::mutex> wlock(write_mu_);
  // The collection may have been dropped, re-created or reindexed to another
  // model while we embedded.
  ASSIGN_OR_RETURN(std::shared_ptr<Collection> now, Find(collection));
  if (now != c || now->state()->settings.spec.model_id != spec.model_id) {
    return absl::AbortedError(absl::StrCat("collection '", collection,
                                           "' changed (dropped or reindexed) during the "
                                           "upsert; retry"));
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

}  // namespace neodb::engine
