#pragma once
// Where a document of a sharded collection lives, and what its shard's log is
// called in JetStream. Every node computes the same answers from the same
// inputs (xxHash64 with a fixed seed, on every architecture), so a write taken
// by any node lands in the shard every replica of it reads.
//
// Names: collection names are [A-Za-z0-9_-]{1,128} (db/collection_spec.h),
// valid in stream names and subject tokens as they are.
//   stream   neodb-<log>-<shard>
//   subject  neodb.<log>.<shard>.<hex of the document id>
// where <log> is the collection's log name: the collection's name for the
// logs it was created with (generation 0), <name>@g<N> for those a cluster
// reindex wrote (generation N: ClusterNode::Reindex). '@' is in no collection
// name, so no collection's logs take another's names.
// One subject per document: the stream keeps one message per subject (the
// document's last upsert, or its tombstone), so the log stays as large as
// the collection and still rebuilds a replica from its first message.

#include <cstdint>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"

namespace neodb::cluster {

inline constexpr uint32_t kMaxShards = 1024;
// INVALID_ARGUMENT unless 1 <= shards <= kMaxShards.
absl::Status CheckShardCount(uint32_t shards);

// The shard of `doc_id` among `shards` (>= 1).
uint32_t ShardOf(const std::string& doc_id, uint32_t shards);

// The log name of `collection`'s generation `generation` (see above).
std::string LogName(const std::string& collection, uint32_t generation);

// The functions below take a log name (a collection's name is its generation 0's).
std::string ShardStreamName(const std::string& collection, uint32_t shard);
// The stream's subjects: neodb.<collection>.<shard>.*
std::string ShardSubjects(const std::string& collection, uint32_t shard);
std::string DocumentSubject(const std::string& collection, uint32_t shard,
                            const std::string& doc_id);

}  // namespace neodb::cluster
