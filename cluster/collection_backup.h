#pragma once
// A sharded collection's backup, made from its log rather than from any one
// node: each shard's compacted stream holds every document's last change with
// its vector, so reading the streams to their ends gives the whole collection
// without asking the nodes (whose copies cover only their shards). Restored
// into a cluster (ClusterNode::RestoreCollection), the changes are published
// to the new collection's log as they are: nothing is embedded again, and the
// shard count may differ (each document goes to its shard of the new count).
//
// On disk, a new directory:
//   manifest.json    {"format":1, "entry": the map entry (base64 of
//                    EncodeShardedCollection), "shards":[{"shard", "file",
//                    "changes", "bytes", "xxh64", "last_sequence"}]}
//   shard-<s>.log    the shard's changes in stream order, each a 4-byte
//                    little-endian length and EncodeShardChange's bytes
// written beside its target and renamed into place whole (atomic_dir.h).
// Each shard is read to the end of its stream as it stood when reached; its
// last sequence is recorded (a consistency token of what the backup holds).
// A change arriving while its shard is read may or may not be in it, as in
// any online backup; a shard's file is in stream order, so a restore replays
// it to the same content.
//
// A backup is hostile input when read back: ReadCollectionBackup checks the
// manifest, each file's size and hash and every record.

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "cluster/cluster_map.h"
#include "cluster/nats_client.h"
#include "cluster/shard_change.h"
#include "cluster/shard_writer.h"
#include "common/env.h"

namespace neodb::cluster {

struct CollectionBackup {
  ShardedCollection entry;  // as it was in the map
  struct Shard {
    uint32_t shard = 0;
    std::string file;  // in the backup directory
    uint64_t changes = 0;
    uint64_t bytes = 0;
    uint64_t xxh64 = 0;
    uint64_t last_sequence = 0;
  };
  std::vector<Shard> shards;

  uint64_t changes() const;
  ConsistencyToken token() const;  // shard -> last sequence read
};

// Writes `c`'s backup into the new directory `dir` (it must not exist).
absl::StatusOr<CollectionBackup> BackupCollection(Env* env, const NatsClient& nats,
                                                  const ShardedCollection& c,
                                                  const std::string& dir);

// The backup in `dir`, its files checked against the manifest (sizes and
// hashes). INVALID_ARGUMENT / DATA_LOSS naming what is wrong.
absl::StatusOr<CollectionBackup> ReadCollectionBackup(Env* env, const std::string& dir);

// Calls `fn` with each change of `shard`'s file in order; stops at the first
// error (a record that does not decode is DATA_LOSS).
absl::Status ForEachBackedUpChange(Env* env, const std::string& dir,
                                   const CollectionBackup::Shard& shard,
                                   const std::function<absl::Status(ShardChange)>& fn);

}  // namespace neodb::cluster
