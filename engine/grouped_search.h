#pragma once
// Group-by over any ranking: the hits of one query grouped by the value of a
// metadata field (SearchParams::group_by), computed exactly by over-fetching.

#include <functional>

#include "absl/status/statusor.h"
#include "engine/documents.h"
#include "engine/search_params.h"

namespace neodb::engine {

// One ranking of the query, `params.k` hits deep (best first; fewer only
// when the ranking has no more: the collection, the filter or the
// threshold is exhausted).
using RankFn = std::function<absl::StatusOr<SearchResult>(const SearchParams& params)>;

// The groups params.group_by asks for: walking the ranking best first, a
// hit whose field holds a value not seen yet opens a group (while fewer than
// `groups` are open), a hit of an open group joins it (while it holds fewer
// than `group_size`), and a hit lacking the field is skipped. Values compare
// whole (an array is one value; 1 and 1.0 are different values). `rank` is
// called with a growing k (starting at groups * group_size, doubling) until
// every group is full or the ranking is exhausted, so the answer equals the
// one the whole ranking would give. Hits carry metadata only when
// params.include_metadata. REQUIRES: params.group_by set and params valid.
absl::StatusOr<SearchResult> GroupedSearch(const SearchParams& params, const RankFn& rank);

// `rank(params)`, grouped when params.group_by is set.
absl::StatusOr<SearchResult> SearchMaybeGrouped(const SearchParams& params, const RankFn& rank);

}  // namespace neodb::engine
