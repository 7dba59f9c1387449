#pragma once
// Where a reindex keeps its new vectors until it commits: a hidden store
// collection "__reindex-<name>" beside the collection, filled in batches, so
// the reindex holds one batch in memory however large the collection.
//
// Commit protocol (crash-safe at every step, idempotent to redo):
//   1. the staging collection gets kCommitMarker in its engine_state (one
//      small write): from here on the reindex is decided;
//   2. RollForward moves the staged documents into the collection in chunks
//      (each chunk: upsert into the collection, then delete from staging);
//   3. the collection records its new model (id and directory) and the
//      directory of the one it leaves (previous_model_dir), and the staging
//      collection is dropped.
// At startup a staging collection with the marker is rolled forward; one
// without it (a reindex that never reached its commit) is dropped, and the
// collection stays wholly on its old model.

#include <functional>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "db/collection_spec.h"
#include "db/store.h"

namespace neodb::engine {

inline constexpr std::string_view kStagingPrefix = "__reindex-";
// New user collections: the API's documented limit (neodb.proto,
// CollectionSpec.name), which leaves room for the staging prefix within the
// store's own limit. Existing longer names (created before the limit) still load.
inline constexpr size_t kMaxUserCollectionNameBytes = 64;
static_assert(kMaxUserCollectionNameBytes + kStagingPrefix.size() <= db::kMaxCollectionNameBytes);
inline constexpr std::string_view kCommitMarker = "reindex-commit";

inline bool IsStagingName(std::string_view name) { return name.starts_with(kStagingPrefix); }
inline std::string StagingName(std::string_view collection) {
  return std::string(kStagingPrefix) + std::string(collection);
}
inline std::string TargetOf(std::string_view staging) {
  return std::string(staging.substr(kStagingPrefix.size()));
}

// Steps 2 and 3 above for the staging collection `staging` (which carries the
// marker and the target model's id and directory). `after_chunk` (may be
// empty) runs after each chunk moved: a test hook that slows the commit down.
absl::Status RollForward(db::Store& store, const db::CollectionSpec& staging,
                         const std::function<void()>& after_chunk = {});

}  // namespace neodb::engine
