// Collection: the write side. What one upsert's documents must be before the
// store takes them, and how committed changes reach the indexes.
#include <optional>

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "engine/change_replay.h"
#include "engine/collection.h"
#include "engine/tenant_scope.h"
#include "engine/text_checks.h"
#include "engine/token_budget.h"
#include "engine/vector_checks.h"

namespace neodb::engine {

absl::StatusOr<Collection::PreparedWrite> Collection::PrepareWrite(
    const State& state, Model* model, std::vector<DocumentInput> docs, int64_t max_request_tokens,
    absl::Time deadline, const CancelCheck& cancelled) {
  if (docs.empty()) return absl::InvalidArgumentError("no documents to upsert");
  const CollectionSettings& settings = state.settings;
  const db::CollectionSpec& spec = settings.spec;
  const bool external = settings.source == VectorSource::kExternal;
  if (!external && model == nullptr) {
    return absl::InternalError(absl::StrCat("collection '", spec.name, "' has no model loaded"));
  }
  Model* m = external ? nullptr : model;
  // Bounds the encoder work of this request before any of it is queued.
  std::optional<RequestTokenBudget> budget;
  if (m) budget.emplace(*m->embedder, max_request_tokens);
  PreparedWrite out;
  std::vector<std::string>& ids = out.ids;
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
    // The transport stores a tenant's documents under its prefix
    // (tenant_scope.h); one without a tenant would belong to nobody.
    if (spec.multi_tenant && !ValidateTenant(TenantOfStoredId(d.id)).ok()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "document #", i, ": collection '", spec.name,
          "' is multi-tenant and the document names no tenant"));
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
  for (size_t j = 0; j < embeddings.size(); ++j) {
    docs[embedded_docs[j]].vector = std::move(embeddings[j].vector);
    out.tokens += embeddings[j].num_tokens;
  }
  out.documents.reserve(docs.size());
  for (size_t i = 0; i < docs.size(); ++i) {
    db::Document d;
    d.id = std::move(docs[i].id);
    d.text = std::move(docs[i].text);
    d.metadata = std::move(docs[i].metadata);
    // Embedded here, or stored exactly as sent: include_vector returns these bits.
    d.vector = std::move(*docs[i].vector);
    d.model_id = spec.model_id;
    out.documents.push_back(std::move(d));
  }
  return out;
}

absl::Status Collection::Apply(std::span<const Change> changes) {
  absl::Status st = state()->indexes->Apply(changes);
  if (st.ok()) return st;
  // The store committed; the indexes are derived. Rebuild them in the background.
  needs_rebuild = true;
  return absl::InternalError(absl::StrCat("index update of collection '", name_,
                                          "' failed (it will be rebuilt): ", st.message()));
}

absl::Status Collection::CatchUp(uint64_t after) {
  const uint64_t last = store_.LastSequence();
  if (last <= after) return absl::OkStatus();
  // A failed index update is reported but does not stop the later changes:
  // the collection rebuilds its indexes from the store.
  absl::Status applied;
  ReplaySink sink;
  sink.wants = [&](const std::string& collection) { return collection == name_; };
  sink.apply = [&](const std::string&, std::span<const Change> changes) -> absl::Status {
    if (absl::Status st = Apply(changes); !st.ok() && applied.ok()) applied = st;
    return absl::OkStatus();
  };
  absl::StatusOr<ReplayResult> read = ReplayChanges(store_, after + 1, last, sink);
  if (!read.ok()) {
    // The next write catches up from its own position only: what this one
    // could not read would never reach the indexes. Rebuild them instead.
    needs_rebuild = true;
    return absl::InternalError(absl::StrCat("index update of collection '", name_,
                                            "' failed (it will be rebuilt): reading the change "
                                            "log: ",
                                            read.status().message()));
  }
  return applied;
}

}  // namespace neodb::engine
