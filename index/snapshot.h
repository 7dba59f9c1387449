#pragma once
// Crash-safe index snapshots. A snapshot is ONE file
//   <dir>/snapshot-<covered_seq:020>-<unix_micros>.nsnap
// holding a manifest (format version, spec, dimension, metric, count, covered
// change-log sequence, model id, payload size and checksum) followed by the
// serialised index. It is written to a temp file, fsynced, renamed into place,
// and the directory fsynced, so a crash leaves either the old or the new
// snapshot, never a torn one; every write goes through `env`. Not thread-safe for concurrent writers to one dir.

#include <cstdint>
#include <memory>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "common/env.h"
#include "index/vector_index.h"

namespace neodb::index {

inline constexpr uint32_t kSnapshotFormatVersion = 1;

struct SnapshotManifest {
  uint32_t format_version = kSnapshotFormatVersion;
  std::string spec;
  int dimension = 0;
  Metric metric = Metric::kCosine;
  uint64_t count = 0;
  // The index reflects every change-log record with seq <= covered_seq.
  uint64_t covered_seq = 0;
  std::string model_id;
  uint64_t payload_bytes = 0;
  uint64_t payload_checksum = 0;
};

struct LoadedSnapshot {
  SnapshotManifest manifest;
  std::unique_ptr<VectorIndex> index;
  std::string path;
};

// Writes a snapshot of `index` into `dir` (created if missing) and then prunes
// all but the newest `keep` snapshots (and stale temp files). Returns its path.
// REQUIRES: nothing mutates `index` during the call (the owner holds its write
// lock so that `covered_seq` describes exactly the serialised state; a violation
// is caught on read, where count must equal the deserialised size).
absl::StatusOr<std::string> WriteSnapshot(const std::string& dir, const VectorIndex& index,
                                          uint64_t covered_seq, const std::string& model_id,
                                          int keep = 2, Env* env = Env::Default());

// The newest snapshot in `dir` that validates completely (manifest, checksum,
// deserialisation), read through `env`. Corrupt or truncated files are
// skipped with a logged reason. NOT_FOUND when there is none.
absl::StatusOr<LoadedSnapshot> ReadLatestSnapshot(const std::string& dir,
                                                  Env* env = Env::Default());

}  // namespace neodb::index
