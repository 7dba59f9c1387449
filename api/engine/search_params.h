#pragma once
// SearchParams: everything one search asks for, built once by the transport
// from its request, validated once (Validate), and carried down to the index
// untouched: k, the metadata filter, the index's search knobs (HNSW
// ef_search, IVF nprobe) and what each hit returns. A keyword or hybrid
// `mode` joins it when the keyword index does.

#include <optional>

#include "absl/status/status.h"
#include "db/filter.h"
#include "index/vector_index.h"

namespace neodb::engine {

inline constexpr int kMaxSearchK = 1000;
inline constexpr int kMaxEfSearch = 2048;  // index/hnsw_index.h caps there too
inline constexpr int kMaxNprobe = 65536;

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

  // INVALID_ARGUMENT naming the first field out of range or a malformed filter.
  absl::Status Validate() const;
};

}  // namespace neodb::engine
