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

// One ranked candidate before verification against the store.
struct Candidate {
  int64_t id = 0;
  float score = 0;
  HitExplain explain;
};

struct Ranked {
  std::vector<Candidate> candidates;
  bool exhausted = false;  // asking for more would return no more
};

// Ranks up to `want` candidates of `state` by params.mode; hybrid fuses by
// params.fusion, or `default_fusion` (the collection's) when it is unset.
// REQUIRES: `vector` is the embedded query unless the mode is keyword.
absl::StatusOr<Ranked> Rank(const IndexSet& indexes, const std::vector<float>* vector,
                            std::string_view query, const SearchParams& params,
                            const keyword::FusionOptions& default_fusion, SearchMode mode, int want,
                            double* alpha) {
  std::optional<MetadataTable::FilterView> f;
  if (params.filter) f.emplace(indexes.metadata(), *params.filter);
  // The keyword leg's filter is the same metadata lookup as the vector leg's.
  keyword::IdFilter allow;
  if (f) allow = [&f](uint64_t id) { return f->Allowed(static_cast<int64_t>(id)); };
  auto keyword_leg = [&](int depth) -> absl::StatusOr<std::vector<keyword::KeywordHit>> {
    return indexes.keyword().index().Search(query, std::min(depth, keyword::kMaxSearchK), allow);
  };
  auto vector_leg = [&](int depth) -> absl::StatusOr<std::vector<index::SearchHit>> {
    ASSIGN_OR_RETURN(auto hits, indexes.vector().index().Search(*vector, depth, f ? &*f : nullptr,
                                                                params.index));
    return std::move(hits[0]);
  };
  Ranked r;
  if (mode == SearchMode::kVector) {
    ASSIGN_OR_RETURN(std::vector<index::SearchHit> hits, vector_leg(want));
    r.exhausted = hits.size() < static_cast<size_t>(want);
    for (size_t i = 0; i < hits.size(); ++i) {
      HitExplain e{0, 0, static_cast<int>(i + 1), hits[i].score, hits[i].score};
      r.candidates.push_back({hits[i].id, hits[i].score, e});
    }
    return r;
  }
  if (mode == SearchMode::kKeyword) {
    ASSIGN_OR_RETURN(std::vector<keyword::KeywordHit> hits, keyword_leg(want));
    r.exhausted = hits.size() < static_cast<size_t>(want);
    for (size_t i = 0; i < hits.size(); ++i) {
      HitExplain e{static_cast<int>(i + 1), hits[i].score, 0, 0, hits[i].score};
      r.candidates.push_back({static_cast<int64_t>(hits[i].id), hits[i].score, e});
    }
    return r;
  }
  const int depth = std::max(want, keyword::kHybridLegDepth);
  // The vector leg first: an index that walks a graph evaluates the filter
  // into a bitmap, which the keyword leg's filter then reads too.
  ASSIGN_OR_RETURN(std::vector<index::SearchHit> vh, vector_leg(depth));
  ASSIGN_OR_RETURN(std::vector<keyword::KeywordHit> kh, keyword_leg(depth));
  std::vector<keyword::RankedId> kl, vl;
  kl.reserve(kh.size());
  vl.reserve(vh.size());
  for (const auto& h : kh) kl.push_back({h.id, h.score});
  for (const auto& h : vh) vl.push_back({static_cast<uint64_t>(h.id), h.score});
  // A query that names no fusion gets the collection's own (its spec).
  const keyword::FusionOptions& fusion = params.fusion ? *params.fusion : default_fusion;
  ASSIGN_OR_RETURN(keyword::FusionResult fused, keyword::Fuse(kl, vl, want, fusion));
  *alpha = fused.alpha;
  r.exhausted = kh.size() < static_cast<size_t>(depth) && vh.size() < static_cast<size_t>(depth);
  for (const keyword::FusedHit& h : fused.hits) {
    HitExplain e{h.keyword.rank, h.keyword.score, h.vector.rank, h.vector.score, h.score};
    r.candidates.push_back({static_cast<int64_t>(h.id), static_cast<float>(h.score), e});
  }
  return r;
}

// Searches `state`'s indexes and verifies every hit against the store.
// REQUIRES: the collection's commit_mu held shared (internal ids stable).
absl::StatusOr<SearchResult> SearchState(const db::Store& store, const Collection::State& state,
                                         const std::vector<float>* vector, std::string_view query,
                                         const SearchParams& params, SearchMode mode) {
  const db::CollectionSpec& spec = state.settings.spec;
  if (mode != SearchMode::kKeyword) {
    RETURN_IF_ERROR(CheckVector("vector", *vector, spec.dimension, spec.name));
  }
  const IndexSet& indexes = *state.indexes;
  SearchResult result;
  result.model_id = spec.model_id;
  result.mode = mode;
  // Hits can be dropped by verification (a concurrent overwrite or delete);
  // widen the search then, a bounded number of times.
  int want = params.k;
  for (int attempt = 0; attempt < 4; ++attempt) {
    ASSIGN_OR_RETURN(Ranked ranked, Rank(indexes, vector, query, params, state.settings.fusion,
                                         mode, want, &result.alpha));
    result.hits.clear();
    for (Candidate& h : ranked.candidates) {
      auto d = store.GetByInternalId(spec.name, static_cast<uint64_t>(h.id));
      if (absl::IsNotFound(d.status())) continue;  // overwritten or deleted meanwhile
      RETURN_IF_ERROR(d.status());
      // Never mix models (a keyword score does not depend on one).
      if (mode != SearchMode::kKeyword && d->model_id != spec.model_id) continue;
      if (params.filter && !params.filter->Matches(d->metadata)) continue;
      Hit hit;
      hit.id = std::move(d->id);
      hit.score = h.score;
      if (params.include_text) hit.text = std::move(d->text);
      if (params.include_metadata) hit.metadata = std::move(d->metadata);
      if (params.include_vector) hit.vector = std::move(d->vector);
      if (params.explain) hit.explain = h.explain;
      result.hits.push_back(std::move(hit));
      if (result.hits.size() == static_cast<size_t>(params.k)) break;
    }
    if (result.hits.size() == static_cast<size_t>(params.k) || ranked.exhausted || want >= 10000) {
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
                                                const SearchParams& params, absl::Time deadline,
                                                const CancelCheck& cancelled) const {
  ASSIGN_OR_RETURN(std::shared_ptr<Collection> c, Find(collection));
  RETURN_IF_ERROR(params.Validate());
  RETURN_IF_ERROR(CheckText("query", query));
  if (instruction && !instruction->empty()) RETURN_IF_ERROR(CheckText("instruction", *instruction));
  // One state from embedding to verification: the query is embedded with the
  // model whose index it searches (a reindex commit waits for us).
  absl::ReaderMutexLock commit(&c->commit_mu());
  std::shared_ptr<const Collection::State> state = c->state();
  const CollectionSettings& settings = state->settings;
  if (params.mode == SearchMode::kKeyword) {
    return SearchState(*store_, *state, nullptr, query, params, SearchMode::kKeyword);
  }
  RETURN_IF_ERROR(memory_budget_->Admit("a query that needs the encoder"));
  ASSIGN_OR_RETURN(std::shared_ptr<Model> m, ModelOf(*state));
  const std::string prefix = instruction ? *instruction : settings.spec.query_instruction;
  RequestTokenBudget budget(*m->embedder, options_.max_request_tokens);
  RETURN_IF_ERROR(budget.Add("query", prefix, query, settings.overflow));
  ASSIGN_OR_RETURN(
      std::vector<encoder::Embedding> e,
      m->batcher->Embed({query}, EmbedOptionsFor(settings, prefix), deadline, cancelled));
  return SearchState(*store_, *state, &e[0].vector, query, params, params.mode);
}

absl::StatusOr<SearchResult> Database::NearVector(const std::string& collection,
                                                  const std::vector<float>& vector,
                                                  const SearchParams& params) const {
  ASSIGN_OR_RETURN(std::shared_ptr<Collection> c, Find(collection));
  RETURN_IF_ERROR(params.Validate());
  absl::ReaderMutexLock commit(&c->commit_mu());
  return SearchState(*store_, *c->state(), &vector, "", params, SearchMode::kVector);
}

absl::StatusOr<std::vector<encoder::Embedding>> Database::Embed(
    std::vector<std::string> texts, const encoder::EmbedOptions& options, absl::Time deadline,
    const CancelCheck& cancelled) const {
  if (texts.empty()) return absl::InvalidArgumentError("no texts to embed");
  RETURN_IF_ERROR(memory_budget_->Admit("embed"));
  for (size_t i = 0; i < texts.size(); ++i) {
    RETURN_IF_ERROR(CheckText(absl::StrCat("text #", i), texts[i]));
  }
  std::shared_ptr<Model> m = models_->Default();
  if (!m) return absl::UnavailableError("server is shutting down");
  RequestTokenBudget budget(*m->embedder, options_.max_request_tokens);
  for (size_t i = 0; i < texts.size(); ++i) {
    RETURN_IF_ERROR(
        budget.Add(absl::StrCat("text #", i), options.prefix, texts[i], options.overflow));
  }
  return m->batcher->Embed(std::move(texts), options, deadline, cancelled);
}

}  // namespace neodb::engine
