#pragma once
// The engine's document and result types: what a write brings in and what a
// search gives back. Their own header because a Collection (which validates
// the one and builds the other) and the Database (which takes and returns
// them) both use them, and the Database includes the Collection.

#include <optional>
#include <string>
#include <vector>

#include "db/document.h"
#include "db/filter.h"
#include "engine/search_params.h"

namespace neodb::engine {

struct DocumentInput {
  std::string id;  // empty: generated
  // Model collections: non-empty UTF-8, embedded by the model. External-vector
  // collections: optional (empty allowed), stored and returned as is.
  std::string text;
  db::Metadata metadata;
  // The client's vector: required by external-vector collections (their
  // dimension, finite values). Model collections take one only when
  // vector_model_id is their model's id (re-importing an export): the text is
  // then stored with that vector, not embedded again.
  std::optional<std::vector<float>> vector;
  // What produced `vector` (a model id, or an external collection's vectors
  // name); empty = not said. A mismatch with the collection is refused.
  std::string vector_model_id;
};

// The documents a count, delete or update acts on: `ids`, or those `filter`
// accepts (then `ids` is empty).
struct DocumentSelection {
  std::vector<std::string> ids;
  std::optional<db::Filter> filter;
  // A multi-tenant collection's tenant (tenant_scope.h): the filter selects
  // among its documents, and the ids must be its (stored) ids. Else empty.
  std::string tenant;
};

// What a metadata update did.
struct MetadataUpdateResult {
  uint64_t matched = 0;  // documents selected (found, and accepted by the filter)
  uint64_t updated = 0;  // of those, the ones whose metadata changed (written)
  std::vector<std::string> missing_ids;  // by ids: the ones not found
};

// Where a hit stood in each leg of a text search (SearchParams::explain).
struct HitExplain {
  int keyword_rank = 0;     // 1-based; 0: the keyword leg did not return it
  float keyword_score = 0;  // BM25
  int vector_rank = 0;      // 1-based; 0: the vector leg did not return it
  float vector_score = 0;   // the metric's similarity
  double fused_score = 0;   // hybrid: the fused score; otherwise the leg's score
};

struct Hit {
  std::string id;
  // Higher is better: the metric's similarity (vector, index/metric.h), BM25
  // (keyword) or the fused score (hybrid, index/keyword/fusion.h).
  float score = 0;
  std::string text;
  db::Metadata metadata;
  std::vector<float> vector;  // when include_vector: the stored one
  std::optional<HitExplain> explain;
};

// One group of a grouped search (SearchParams::group_by): the hits whose
// field holds `value` (compared whole: an array is one value), best first.
struct HitGroup {
  db::Value value;
  std::vector<Hit> hits;
};

struct SearchResult {
  std::vector<Hit> hits;  // empty when grouped
  std::vector<HitGroup> groups;  // when grouped, ordered by their best hit
  std::string model_id;
  SearchMode mode = SearchMode::kVector;
  // Hybrid (weighted, adaptive): the vector leg's share that was used.
  double alpha = 0;
};

}  // namespace neodb::engine
