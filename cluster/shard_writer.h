#pragma once
// ShardWriter: the write path of a sharded collection on the node that takes
// the write. It checks and embeds the documents with the collection's model
// here (Database::PrepareUpsert: the encoder tier is every node, and replicas
// never embed again), then publishes each document, or each id's tombstone,
// to its shard's stream (shard_map.h) and returns once JetStream has
// acknowledged every one of them on a quorum.
//
// A request's changes are published all at once and their acks awaited
// together (one round trip's wait, not one per document). A publish that
// fails or whose ack does not come (no leader, a server restarting, an ack
// lost) is retried, one by one, with the same publish id until the deadline,
// so a retry never stores a change twice; a repeated id in one request is
// published once, its last version (as the store would keep it); past the deadline the write fails with
// UNAVAILABLE and the changes acknowledged before it stay (each document is
// its own change: a batch is not atomic across documents, as in every
// sharded peer).
//
// The result carries a consistency token: for each shard written, the
// highest stream sequence of this write. A read that waits until its
// replicas' positions reach it sees the write (ShardReplica::WaitFor).
//
// Thread-safety: safe to call concurrently.

#include <atomic>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <utility>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "cluster/cluster_map.h"
#include "cluster/nats_client.h"
#include "cluster/shard_change.h"
#include "engine/database.h"

namespace neodb::cluster {

// shard -> the highest sequence a write reached in that shard's stream.
using ConsistencyToken = std::map<uint32_t, uint64_t>;
// "shard:sequence,..." and back (INVALID_ARGUMENT for anything else).
std::string FormatToken(const ConsistencyToken& token);
absl::StatusOr<ConsistencyToken> ParseToken(const std::string& text);

struct ShardedWrite {
  std::vector<std::string> ids;  // upserts: generated ids filled in
  ConsistencyToken token;
  int64_t tokens = 0;  // upserts: tokens embedded
};

// Adds `more` to `token` (per shard, the higher sequence).
void MergeToken(const ConsistencyToken& more, ConsistencyToken* token);

class ShardWriter {
 public:
  // `db` holds the collection (for its settings and model); `node_id` makes
  // this writer's publish ids unique (1..64 bytes). Both outlive the writer.
  ShardWriter(engine::Database* db, const NatsClient* nats, std::string node_id);

  // Writes to `c`'s current log (its entry as this node last read it).
  // UNAVAILABLE when this node's collection embeds with another model than
  // the entry's: a cluster reindex is switching it (retry).
  // `current`, when given, says whether c's log is still the collection's:
  // once it is not (a cluster reindex switched it), retries stop with
  // UNAVAILABLE (retry) instead of waiting for a log that is gone.
  absl::StatusOr<ShardedWrite> Upsert(const ShardedCollection& c,
                                      std::vector<engine::DocumentInput> docs,
                                      absl::Time deadline,
                                      const std::function<bool()>& current = {});
  // Publishes a tombstone for every id (whether or not a replica has it:
  // the tombstone is what keeps a lagging replica from keeping it).
  absl::StatusOr<ShardedWrite> Delete(const ShardedCollection& c,
                                      const std::vector<std::string>& ids, absl::Time deadline,
                                      const std::function<bool()>& current = {});

  // Publishes `changes` to the streams of `log` (shard_map.h), one per
  // publish id of `ids` (the caller's: a copy made twice is stored once),
  // and waits for every ack: all at once (asynchronous publishes, acks
  // awaited together), then one by one, with the same ids, those whose ack
  // did not come. REQUIRES: at most one change per document id.
  absl::Status PublishWithIds(const std::string& log, uint32_t shards,
                              const std::vector<ShardChange>& changes,
                              const std::vector<std::string>& ids, absl::Time deadline,
                              ConsistencyToken* token, const std::function<bool()>& current = {});

 private:
  // PublishWithIds for a request's changes, with ids of this writer's own.
  absl::Status PublishAll(const std::string& log, uint32_t shards,
                          const std::vector<ShardChange>& changes, absl::Time deadline,
                          ConsistencyToken* token, const std::function<bool()>& current);
  absl::Status Publish(const std::string& log, uint32_t shards, const ShardChange& change,
                       const std::string& msg_id, absl::Time deadline, ConsistencyToken* token,
                       const std::function<bool()>& current);

  engine::Database* const db_;
  const NatsClient* const nats_;
  // The ack records of finished requests, kept a while: nats.c may still be
  // inside a request's ack callback when its JetStream context is destroyed,
  // so the record the callback writes into must outlive the request.
  std::mutex retired_mu_;
  std::deque<std::pair<absl::Time, std::shared_ptr<void>>> retired_;
  const std::string node_id_;
  const std::string epoch_;  // per process: ids never repeat across restarts
  std::atomic<uint64_t> next_{0};
};

}  // namespace neodb::cluster
