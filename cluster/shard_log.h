#pragma once
// ShardLog: a shard's change log as a JetStream stream (names: shard_map.h).
//
// Bounded and still complete: the stream keeps one message per subject, and
// each document has its own subject, so it holds each document's last
// upsert or its tombstone: as many messages as the shard has ids ever
// written, never more, and a replica rebuilt from the first message ends
// with exactly the shard's content. (A tombstone stays as long as the stream:
// dropping it would let a lagging replica keep a deleted document. A purge of
// tombstones older than every replica's position is future work.)
//
// A publish is acknowledged by JetStream once the stream's leader has stored
// it on a quorum of the stream's replicas (R=3: two of three servers), and
// the ack carries the change's sequence: the write's consistency token.
// Publishes carry a de-duplication id (JetStream's Nats-Msg-Id): a retry of a
// publish whose ack was lost stores nothing twice within the window.

#include <cstdint>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "cluster/nats_client.h"
#include "cluster/shard_change.h"

namespace neodb::cluster {

struct ShardStreamOptions {
  // JetStream replicas of the stream (1..5; the NATS cluster needs as many servers).
  int replicas = 1;
  // How long publish ids are remembered for de-duplication.
  absl::Duration duplicate_window = absl::Minutes(2);
};

// Creates the stream of `collection`'s `shard` unless it exists; an existing
// one with other subjects, replicas or retention is FAILED_PRECONDITION.
absl::Status EnsureShardStream(const NatsClient& nats, const std::string& collection,
                               uint32_t shard, const ShardStreamOptions& options);
// Deletes the stream (NOT_FOUND when there is none).
absl::Status DeleteShardStream(const NatsClient& nats, const std::string& collection,
                               uint32_t shard);
// Seals the stream: from then on JetStream refuses every publish to it, and
// its messages stay readable (a cluster reindex's fence: no write lands in a
// log it has finished copying). Sealing is final.
absl::Status SealShardStream(const NatsClient& nats, const std::string& log, uint32_t shard);
// The stream's JetStream replicas.
absl::StatusOr<int> ShardStreamReplicas(const NatsClient& nats, const std::string& log,
                                        uint32_t shard);
// The sequence of the stream's last message (0 when it never had one).
absl::StatusOr<uint64_t> ShardLastSequence(const NatsClient& nats, const std::string& collection,
                                           uint32_t shard);
// Messages the stream holds now (after compaction).
absl::StatusOr<uint64_t> ShardMessageCount(const NatsClient& nats, const std::string& collection,
                                           uint32_t shard);

// Publishes `change` to its document's subject in `shard`'s stream and waits
// for the quorum's ack; returns the change's stream sequence (a duplicate's
// is the first copy's). `msg_id` de-duplicates retries (1..128 bytes). The
// wait for the ack ends at `deadline` (or after the client's publish_attempt):
// UNAVAILABLE then, the change stored or not (a retry with the same id tells).
absl::StatusOr<uint64_t> PublishShardChange(const NatsClient& nats, const std::string& collection,
                                            uint32_t shard, const ShardChange& change,
                                            const std::string& msg_id,
                                            absl::Time deadline = absl::InfiniteFuture());

}  // namespace neodb::cluster
