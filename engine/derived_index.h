#pragma once
// DerivedIndex: one index a collection derives from its stored documents (the
// vector index now; a keyword index next). The store is the truth; a derived
// index is rebuilt from it, loaded from its own snapshot, and kept up to date
// by applying the change log through one path, Apply, whether at startup
// (replay after a snapshot), after each write (catch-up), or while a rebuild
// catches up with writes that happened during its scan.
//
// Thread-safety: implementations must allow Apply concurrently with their own
// reads (searches); Apply, Save and Load are called by one thread at a time
// (the database serialises them under its write lock).

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "common/env.h"
#include "db/document.h"

namespace neodb::engine {

// One change-log record of a collection, resolved against the store.
struct Change {
  uint64_t seq = 0;
  // An internal id that is no longer live (the overwritten or deleted
  // version); 0 when none.
  int64_t removed = 0;
  // The new live version, for an upsert whose version is still live. Absent
  // for deletes, and for upserts overwritten later in the log (their removal
  // comes with that later record).
  std::optional<db::Document> added;
};

// What a snapshot must match to be loaded: a snapshot of another model, or
// taken past the end of the log, is not this collection's.
struct SnapshotKey {
  std::string model_id;
  uint64_t last_seq = 0;  // the log's end now: covered_seq may not exceed it
  // Set for indexes loaded after the vector index: the sequence the vector
  // snapshot covers (0 when it could not be loaded). An index keyed by the
  // same internal ids must cover exactly this, or be rebuilt.
  std::optional<uint64_t> paired_seq;
};

class DerivedIndex {
 public:
  virtual ~DerivedIndex() = default;

  // Short name, also its snapshot's place ("vector", "keyword").
  virtual std::string_view kind() const = 0;

  // Applies `changes` in log order. Idempotent, so that replaying records a
  // snapshot already covers is harmless: removing an absent id and adding a
  // present one are no-ops. An error leaves the index needing a rebuild.
  virtual absl::Status Apply(std::span<const Change> changes) = 0;

  // Writes a crash-safe snapshot under `dir` (the collection's snapshot
  // directory), covering the log up to `covered_seq`, keeping `keep`, every
  // write through `env`. Indexes that are cheap to rebuild may write nothing.
  virtual absl::Status Save(Env* env, const std::string& dir, uint64_t covered_seq,
                            const std::string& model_id, int keep) const = 0;
  // Replaces the contents with the newest valid snapshot under `dir` that
  // matches `key`; returns the log position it covers. NOT_FOUND when there
  // is none (the caller then rebuilds from the store).
  virtual absl::StatusOr<uint64_t> Load(const std::string& dir, const SnapshotKey& key) = 0;

  // Live entries, and their internal ids ascending (for Verify).
  virtual size_t size() const = 0;
  virtual std::vector<int64_t> Ids() const = 0;
  // True when the index asks to be rebuilt (e.g. HNSW tombstones piled up).
  virtual bool NeedsRebuild() const { return false; }
};

}  // namespace neodb::engine
