#include "engine/grouped_search.h"

#include <algorithm>
#include <cstdint>

#include "common/status_macros.h"
#include "db/metadata.h"

namespace neodb::engine {
namespace {

// Groups `hits` (best first); `complete` when every group of the answer is
// full (then no deeper hit can change it).
std::vector<HitGroup> Group(std::vector<Hit>& hits, const GroupBy& by, bool* complete) {
  std::vector<HitGroup> groups;
  size_t full = 0;
  for (Hit& hit : hits) {
    const db::Value* v = db::FindPath(hit.metadata, by.field);
    if (v == nullptr) continue;
    auto g = std::find_if(groups.begin(), groups.end(),
                          [&](const HitGroup& x) { return x.value == *v; });
    if (g == groups.end()) {
      if (groups.size() == static_cast<size_t>(by.groups)) continue;
      groups.push_back({*v, {}});
      g = groups.end() - 1;
    }
    if (g->hits.size() == static_cast<size_t>(by.group_size)) continue;
    g->hits.push_back(std::move(hit));
    if (g->hits.size() == static_cast<size_t>(by.group_size)) ++full;
    if (full == static_cast<size_t>(by.groups)) break;
  }
  *complete = full == static_cast<size_t>(by.groups);
  return groups;
}

}  // namespace

absl::StatusOr<SearchResult> GroupedSearch(const SearchParams& params, const RankFn& rank) {
  const GroupBy& by = *params.group_by;
  SearchParams p = params;
  p.group_by.reset();
  p.offset = 0;
  p.include_metadata = true;  // the field is read from the hits
  p.k = by.groups * by.group_size;
  for (;;) {
    ASSIGN_OR_RETURN(SearchResult r, rank(p));
    const bool exhausted = r.hits.size() < static_cast<size_t>(p.k);
    bool complete = false;
    std::vector<HitGroup> groups = Group(r.hits, by, &complete);
    if (complete || exhausted || p.k > (INT32_MAX / 2)) {
      if (!params.include_metadata) {
        for (HitGroup& g : groups) {
          for (Hit& h : g.hits) h.metadata.clear();
        }
      }
      r.hits.clear();
      r.groups = std::move(groups);
      return r;
    }
    p.k *= 2;
  }
}

absl::StatusOr<SearchResult> SearchMaybeGrouped(const SearchParams& params, const RankFn& rank) {
  if (params.group_by) return GroupedSearch(params, rank);
  return rank(params);
}

}  // namespace neodb::engine
