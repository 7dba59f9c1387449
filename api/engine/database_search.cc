// Database: the read path (get, list, near-text, near-vector, embed).
#include <algorithm>
#include <cmath>

#include "absl/strings/str_cat.h"
#include "api/engine/database.h"
#include "api/engine/text_checks.h"
#include "api/engine/vector_checks.h"
#include "common/status_macros.h"

namespace neodb::engine {
namespace {

// Searches `state`'s indexes and verifies every hit against the store.
// REQUIRES: the collection's commit_mu held shared (internal ids stable).
absl::StatusOr<SearchResult> SearchState(const db::Store& store, const Collection::State& state,
                                         const std::vector<float>& vector,
                                         const SearchParams& params) {
  const db::CollectionSpec& spec = state.settings.spec;
  RETURN_IF_ERROR(CheckVector("vector", vector, spec.dimension, spec.name));
  const IndexSet& indexes = *state.indexes;
  SearchResult result;
  result.model_id = spec.model_id;
  // Hits can be dropped by verification (a concurrent overwrite or delete);
  // widen the search then, a bounded number of times.
  int want = params.k;
  for (int attempt = 0; attempt < 4; ++attempt) {
    std::vector<index::SearchHit> raw;
    {
      std::optional<MetadataTable::FilterView> f;
      if (params.filter) f.emplace(indexes.metadata(), *params.filter);
      ASSIGN_OR_RETURN(auto hits, indexes.vector().index().Search(vector, want, f ? &*f : nullptr,
                                                                  params.index));
      raw = std::move(hits[0]);
    }
    result.hits.clear();
    for (const auto& h : raw) {
      auto d = store.GetByInternalId(spec.name, static_cast<uint64_t>(h.id));
      if (absl::IsNotFound(d.status())) continue;  // overwritten or deleted meanwhile
      RETURN_IF_ERROR(d.status());
      if (d->model_id != spec.model_id) continue;  // never mix models
      if (params.filter && !params.filter->Matches(d->metadata)) continue;
      Hit hit;
      hit.id = std::move(d->id);
      hit.score = h.score;
      if (params.include_text) hit.text = std::move(d->text);
      if (params.include_metadata) hit.metadata = std::move(d->metadata);
      if (params.include_vector) hit.vector = std::move(d->vector);
      result.hits.push_back(std::move(hit));
      if (result.hits.size() == static_cast<size_t>(params.k)) break;
    }
    if (result.hits.size() == static_cast<size_t>(params.k) ||
        raw.size() < static_cast<size_t>(want) || want >= 10000) {
      break;
    }
    want = std::min(want * 2, 10000);
  }
  return result;
}

}  // namespace

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
                                                const SearchParams& params,
                                                absl::Time deadline) const {
  ASSIGN_OR_RETURN(std::shared_ptr<Collection> c, Find(collection));
  RETURN_IF_ERROR(params.Validate());
  RETURN_IF_ERROR(CheckText("query", query));
  if (instruction && !instruction->empty()) RETURN_IF_ERROR(CheckText("instruction", *instruction));
  // One state from embedding to verification: the query is embedded with the
  // model whose index it searches (a reindex commit waits for us).
  absl::ReaderMutexLock commit(&c->commit_mu());
  std::shared_ptr<const Collection::State> state = c->state();
  const CollectionSettings& settings = state->settings;
  ASSIGN_OR_RETURN(std::shared_ptr<Model> m, ModelOf(*state));
  const std::string prefix = instruction ? *instruction : settings.spec.query_instruction;
  if (settings.overflow != encoder::Overflow::kChunk) {
    ASSIGN_OR_RETURN(int n, m->embedder->CountTokens(prefix, query));
    if (n > m->embedder->max_tokens()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "query has ", n, " tokens, over the model's maximum of ", m->embedder->max_tokens()));
    }
  }
  ASSIGN_OR_RETURN(std::vector<encoder::Embedding> e,
                   m->batcher->Embed({query}, EmbedOptionsFor(settings, prefix), deadline));
  return SearchState(*store_, *state, e[0].vector, params);
}

absl::StatusOr<SearchResult> Database::NearVector(const std::string& collection,
                                                  const std::vector<float>& vector,
                                                  const SearchParams& params) const {
  ASSIGN_OR_RETURN(std::shared_ptr<Collection> c, Find(collection));
  RETURN_IF_ERROR(params.Validate());
  absl::ReaderMutexLock commit(&c->commit_mu());
  return SearchState(*store_, *c->state(), vector, params);
}

absl::StatusOr<std::vector<encoder::Embedding>> Database::Embed(
    std::vector<std::string> texts, const encoder::EmbedOptions& options,
    absl::Time deadline) const {
  if (texts.empty()) return absl::InvalidArgumentError("no texts to embed");
  for (size_t i = 0; i < texts.size(); ++i) {
    RETURN_IF_ERROR(CheckText(absl::StrCat("text #", i), texts[i]));
  }
  std::shared_ptr<Model> m = models_->Default();
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

}  // namespace neodb::engine
