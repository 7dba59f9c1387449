// Collection: the read side. Ranks a state's indexes by the query's mode
// (one leg, or both fused), in an order that does not depend on internal
// numbering, and verifies every hit against the store.
#include <algorithm>
#include <initializer_list>
#include <optional>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "common/status_macros.h"
#include "engine/collection.h"
#include "engine/side_task.h"
#include "engine/tenant_scope.h"
#include "engine/vector_checks.h"
#include "index/keyword/fusion.h"

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

// A query's candidates renumbered 0, 1, ... in the order of their document
// ids (byte order), so that ordering and cutting the legs and fusing them,
// which break ties by ascending id (index/keyword/fusion.h), break them by
// document id: the ranking does not depend on the internal ids, which follow
// the order of insertion.
class ByDocumentId {
 public:
  // Renumbers the ids (internal ids) of every leg in `legs`. `filter`: the
  // search's view of the metadata table, if it holds one (its lock is not
  // reentrant).
  ByDocumentId(const MetadataTable& table, const MetadataTable::FilterView* filter,
               std::initializer_list<std::vector<keyword::RankedId>*> legs) {
    for (const auto* leg : legs) {
      for (const keyword::RankedId& h : *leg) internal_.push_back(static_cast<int64_t>(h.id));
    }
    std::sort(internal_.begin(), internal_.end());
    internal_.erase(std::unique(internal_.begin(), internal_.end()), internal_.end());
    const std::vector<std::string> names =
        filter ? filter->DocumentIds(internal_) : table.DocumentIds(internal_);
    // A hit whose document went away meanwhile has no name (""); the
    // internal id orders it among those, and verification drops it.
    std::vector<size_t> order(internal_.size());
    for (size_t i = 0; i < order.size(); ++i) order[i] = i;
    std::sort(order.begin(), order.end(), [&](size_t a, size_t b) {
      return names[a] != names[b] ? names[a] < names[b] : internal_[a] < internal_[b];
    });
    absl::flat_hash_map<int64_t, uint64_t> number;
    std::vector<int64_t> by_number(order.size());
    for (size_t n = 0; n < order.size(); ++n) {
      number[internal_[order[n]]] = n;
      by_number[n] = internal_[order[n]];
    }
    internal_ = std::move(by_number);
    for (auto* leg : legs) {
      for (keyword::RankedId& h : *leg) h.id = number.at(static_cast<int64_t>(h.id));
    }
  }
  // The internal id of candidate number `n`.
  int64_t Internal(uint64_t n) const { return internal_[n]; }

 private:
  std::vector<int64_t> internal_;  // by number
};

// Ranks up to `want` candidates of `state` by params.mode; hybrid fuses by
// params.fusion, or `default_fusion` (the collection's) when it is unset.
// Every leg is fetched past its cut while ties cross it (keyword::FetchLeg)
// and cut in the order of score, then document id.
// REQUIRES: `vector` is the embedded query unless the mode is keyword.
absl::StatusOr<Ranked> Rank(const IndexSet& indexes, const std::vector<float>* vector,
                            std::string_view query, const SearchParams& params,
                            const keyword::FusionOptions& default_fusion, SearchMode mode, int want,
                            double* alpha) {
  std::optional<MetadataTable::FilterView> f;
  if (params.filter || !params.tenant.empty()) {
    f.emplace(indexes.metadata(), params.filter ? &*params.filter : nullptr, params.tenant);
  }
  // The keyword leg's filter is the same metadata lookup as the vector leg's.
  keyword::IdFilter allow;
  if (f) allow = [&f](uint64_t id) { return f->Allowed(static_cast<int64_t>(id)); };
  // A tenant's keyword scores use its own documents' statistics, as in a
  // collection of its own (and other tenants' texts do not shift them).
  const keyword::CorpusStats* corpus = params.keyword_corpus.get();
  std::optional<keyword::CorpusStats> tenant_corpus;
  // (A view lists candidates only for a tenant: its documents.)
  const std::vector<int64_t>* candidates = f ? f->Candidates() : nullptr;
  if (corpus == nullptr && candidates != nullptr && mode != SearchMode::kVector) {
    tenant_corpus = indexes.keyword().index().TermStatistics(query, *candidates);
    corpus = &*tenant_corpus;
  }
  // A tenant's keyword leg scores the tenant's documents alone.
  auto keyword_leg = [&](int n) -> absl::StatusOr<std::vector<keyword::RankedId>> {
    const keyword::KeywordIndex& index = indexes.keyword().index();
    ASSIGN_OR_RETURN(std::vector<keyword::KeywordHit> hits,
                     candidates != nullptr ? index.SearchAmong(query, n, *candidates, allow, corpus)
                                           : index.Search(query, n, allow, corpus));
    std::vector<keyword::RankedId> leg;
    leg.reserve(hits.size());
    for (const auto& h : hits) leg.push_back({h.id, h.score});
    return leg;
  };
  auto vector_leg = [&](int n) -> absl::StatusOr<std::vector<keyword::RankedId>> {
    ASSIGN_OR_RETURN(auto hits, indexes.vector().index().Search(*vector, n, f ? &*f : nullptr,
                                                                params.index));
    std::vector<keyword::RankedId> leg;
    leg.reserve(hits[0].size());
    for (const auto& h : hits[0]) leg.push_back({static_cast<uint64_t>(h.id), h.score});
    return leg;
  };
  const MetadataTable::FilterView* view = f ? &*f : nullptr;
  Ranked r;
  if (mode != SearchMode::kHybrid) {
    const bool by_keyword = mode == SearchMode::kKeyword;
    ASSIGN_OR_RETURN(keyword::FetchedLeg leg,
                     keyword::FetchLeg(by_keyword ? keyword::LegFetch(keyword_leg)
                                                  : keyword::LegFetch(vector_leg),
                                       want));
    r.exhausted = leg.complete && leg.hits.size() <= static_cast<size_t>(want);
    const ByDocumentId numbers(indexes.metadata(), view, {&leg.hits});
    const std::vector<keyword::RankedId> hits = keyword::CutLeg(std::move(leg.hits), want);
    for (size_t i = 0; i < hits.size(); ++i) {
      const int rank = static_cast<int>(i + 1);
      HitExplain e = by_keyword ? HitExplain{rank, hits[i].score, 0, 0, hits[i].score}
                                : HitExplain{0, 0, rank, hits[i].score, hits[i].score};
      r.candidates.push_back({numbers.Internal(hits[i].id), hits[i].score, e});
    }
    return r;
  }
  const int depth = std::max(want, keyword::kHybridLegDepth);
  // The two legs at once: the keyword leg on an idle helper thread (or on
  // this one after the vector leg, when none is idle), the vector leg here.
  // Each leg's hits are what it would give alone. The keyword leg asks its
  // filter only after scoring every posting (KeywordIndex::Rank), by which
  // time a graph walk has usually evaluated the filter into a bitmap; its
  // answers are the same either way (FilterView::Allowed).
  absl::StatusOr<keyword::FetchedLeg> kl_or = absl::UnknownError("keyword leg not run");
  SideTask keyword_task(&SideHelpers::ForSearch(),
                        [&] { kl_or = keyword::FetchLeg(keyword_leg, depth); });
  absl::StatusOr<keyword::FetchedLeg> vl_or = keyword::FetchLeg(vector_leg, depth);
  keyword_task.Join();
  RETURN_IF_ERROR(vl_or.status());
  RETURN_IF_ERROR(kl_or.status());
  keyword::FetchedLeg vl = *std::move(vl_or);
  keyword::FetchedLeg kl = *std::move(kl_or);
  r.exhausted = kl.complete && kl.hits.size() < static_cast<size_t>(depth) && vl.complete &&
                vl.hits.size() < static_cast<size_t>(depth);
  const ByDocumentId numbers(indexes.metadata(), view, {&kl.hits, &vl.hits});
  const std::vector<keyword::RankedId> k_cut = keyword::CutLeg(std::move(kl.hits), depth);
  const std::vector<keyword::RankedId> v_cut = keyword::CutLeg(std::move(vl.hits), depth);
  // A query that names no fusion gets the collection's own (its spec).
  const keyword::FusionOptions& fusion = params.fusion ? *params.fusion : default_fusion;
  ASSIGN_OR_RETURN(keyword::FusionResult fused, keyword::Fuse(k_cut, v_cut, want, fusion));
  *alpha = fused.alpha;
  for (const keyword::FusedHit& h : fused.hits) {
    HitExplain e{h.keyword.rank, h.keyword.score, h.vector.rank, h.vector.score, h.score};
    r.candidates.push_back({numbers.Internal(h.id), static_cast<float>(h.score), e});
  }
  return r;
}

}  // namespace

keyword::CorpusStats Collection::KeywordStatistics(
    const State& state, std::string_view query,
    const std::function<bool(std::string_view)>& within) const {
  const keyword::KeywordIndex& index = state.indexes->keyword().index();
  if (!within) return index.TermStatistics(query);
  // The documents `within` accepts, by internal id (one pass over the
  // collection's names: a fan-out asks this only of a node that holds more
  // shards than it answers for).
  std::vector<int64_t> ids;
  for (uint64_t id : index.Ids()) ids.push_back(static_cast<int64_t>(id));
  const std::vector<std::string> names = state.indexes->metadata().DocumentIds(ids);
  absl::flat_hash_set<uint64_t> accepted;
  for (size_t i = 0; i < ids.size(); ++i) {
    if (!names[i].empty() && within(names[i])) accepted.insert(static_cast<uint64_t>(ids[i]));
  }
  return index.TermStatistics(query, [&accepted](uint64_t id) { return accepted.contains(id); });
}

absl::StatusOr<SearchResult> Collection::Search(const State& state,
                                               const std::vector<float>* vector,
                                               std::string_view query, const SearchParams& params,
                                               SearchMode mode) const {
  const db::CollectionSpec& spec = state.settings.spec;
  ASSIGN_OR_RETURN(const TenantScope scope, TenantScope::For(spec, params.tenant));
  if (mode != SearchMode::kKeyword) {
    RETURN_IF_ERROR(CheckVector("vector", *vector, spec.dimension, spec.name));
  }
  const IndexSet& indexes = *state.indexes;
  SearchResult result;
  result.model_id = spec.model_id;
  result.mode = mode;
  // Hits can be dropped by verification (a concurrent overwrite or delete);
  // widen the search then, a bounded number of times.
  // Offset pages the ranking: rank offset + k, drop the first offset. The
  // excluded documents (recommend's examples) are ranked and dropped too.
  const size_t wanted = static_cast<size_t>(params.k) + static_cast<size_t>(params.offset);
  const absl::flat_hash_set<std::string> excluded(params.exclude_ids.begin(),
                                                  params.exclude_ids.end());
  int want = static_cast<int>(wanted + excluded.size());
  for (int attempt = 0; attempt < 4; ++attempt) {
    ASSIGN_OR_RETURN(Ranked ranked, Rank(indexes, vector, query, params, state.settings.fusion,
                                         mode, want, &result.alpha));
    result.hits.clear();
    for (Candidate& h : ranked.candidates) {
      auto d = store_.GetByInternalId(spec.name, static_cast<uint64_t>(h.id));
      if (absl::IsNotFound(d.status())) continue;  // overwritten or deleted meanwhile
      RETURN_IF_ERROR(d.status());
      // Never mix models (a keyword score does not depend on one).
      if (mode != SearchMode::kKeyword && d->model_id != spec.model_id) continue;
      if (params.filter && !params.filter->Matches(d->metadata)) continue;
      if (!scope.Owns(d->id)) continue;  // never another tenant's, whatever an index said
      // A tenant's hits carry its own ids (tenant_scope.h).
      std::string id(scope.Visible(d->id));
      if (excluded.contains(id)) continue;
      Hit hit;
      hit.id = std::move(id);
      hit.score = h.score;
      if (params.include_text) hit.text = std::move(d->text);
      if (params.include_metadata) hit.metadata = std::move(d->metadata);
      if (params.include_vector) hit.vector = std::move(d->vector);
      if (params.explain) hit.explain = h.explain;
      result.hits.push_back(std::move(hit));
      if (result.hits.size() == wanted) break;
    }
    if (result.hits.size() == wanted || ranked.exhausted || want >= 10000) break;
    want = std::min(want * 2, 10000);
  }
  result.hits.erase(result.hits.begin(),
                    result.hits.begin() + std::min(result.hits.size(),
                                                   static_cast<size_t>(params.offset)));
  // Best first: the hits below the threshold are a suffix.
  if (params.score_threshold) {
    auto below = std::find_if(result.hits.begin(), result.hits.end(),
                              [&](const Hit& h) { return h.score < *params.score_threshold; });
    result.hits.erase(below, result.hits.end());
  }
  return result;
}

}  // namespace neodb::engine
