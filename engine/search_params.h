#pragma once
// SearchParams: everything one search asks for, built once by the transport
// from its request, validated once (Validate), and carried down to the index
// untouched: k, the metadata filter, the index's search knobs (HNSW
// ef_search, IVF nprobe), what each hit returns, and for text queries the
// mode (vector, keyword or hybrid) and how hybrid fuses its two legs.

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "db/filter.h"
#include "index/keyword/fusion.h"
#include "index/keyword/keyword_index.h"
#include "index/vector_index.h"

namespace neodb::engine {

inline constexpr int kMaxSearchK = 1000;
inline constexpr int kMaxEfSearch = 2048;  // index/hnsw_index.h caps there too
inline constexpr int kMaxNprobe = 65536;
inline constexpr int kMaxGroupSize = 100;

// Hits grouped by the value of one metadata field (SearchParams::group_by).
struct GroupBy {
  // A metadata path, dotted for nested objects (db::FindPath). Non-empty.
  std::string field;
  // Groups wanted, 1..kMaxSearchK; the groups are ordered by their best hit.
  int groups = 10;
  // Hits per group, 1..kMaxGroupSize, best first. groups * group_size is at
  // most kMaxSearchK.
  int group_size = 1;
};

// What a text query ranks by. NearVector is always kVector.
enum class SearchMode : uint8_t { kVector = 0, kKeyword = 1, kHybrid = 2 };
// "vector" | "keyword" | "hybrid"; INVALID_ARGUMENT otherwise.
absl::StatusOr<SearchMode> ParseSearchMode(std::string_view name);
std::string_view SearchModeName(SearchMode mode);

struct SearchParams {
  // Hits wanted, 1..kMaxSearchK. Default: 10.
  int k = 10;
  // Only documents whose metadata matches. Default: none.
  std::optional<db::Filter> filter;
  // The index's knobs; 0 = the collection's default (set at creation), else
  // the index's own. HNSW: beam width, 0..kMaxEfSearch. IVF: lists probed,
  // 0..kMaxNprobe. An index of another kind ignores them.
  index::SearchOptions index;
  bool include_text = false;
  bool include_metadata = false;
  // Each hit carries its stored vector, as the store holds it (bit for bit,
  // not re-read from a possibly lossy index). Default: false.
  bool include_vector = false;
  // NearText only. Default: hybrid.
  SearchMode mode = SearchMode::kHybrid;
  // Hybrid only: method, alpha (weighted: the vector leg's share, in
  // [0, 1]), rrf_k. Validated by Validate. Default: unset = the collection's
  // own default fusion (its spec; adaptive unless set otherwise).
  std::optional<keyword::FusionOptions> fusion;
  // Each hit carries its rank and score in each leg and the fused score.
  bool explain = false;
  // The keyword leg ranks by these corpus statistics instead of the
  // collection's own: a sharded collection's fan-out passes the whole
  // collection's, summed over its shards (keyword::CorpusStats). Default: none.
  std::shared_ptr<const keyword::CorpusStats> keyword_corpus;
  // Only hits whose final score (the mode's: similarity, BM25 or fused) is
  // at least this. Finite. Default: none.
  std::optional<float> score_threshold;
  // Skips the first `offset` hits of the ranking (paging): offset + k is at
  // most kMaxSearchK. Default: 0.
  int offset = 0;
  // Groups the hits by a metadata field; `k` is then unused (groups and
  // group_size say how many) and offset must be 0. Default: none.
  std::optional<GroupBy> group_by;
  // The tenant the search acts for (a multi-tenant collection's calls name
  // one, others none: tenant_scope.h); it sees that tenant's documents only,
  // ranked by keyword statistics of that tenant's documents, and its hits
  // carry the tenant's own ids. Default: none.
  std::string tenant;
  // Documents never returned (recommend's examples; the caller's ids, in a
  // tenant's search the tenant's); set by the engine, not by a client.
  // Default: none.
  std::vector<std::string> exclude_ids;

  // INVALID_ARGUMENT naming the first field out of range or a malformed filter.
  absl::Status Validate() const;
};

}  // namespace neodb::engine
