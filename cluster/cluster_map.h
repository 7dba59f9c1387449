#pragma once
// ClusterMap: what every node of a cluster agrees on, kept in JetStream's
// key-value store (so in the same Raft-replicated servers as the shard logs:
// no second consensus system to run).
//
//   bucket neodb-collections  <name> -> the sharded collection: the spec it
//                             was created with, the model id the creating
//                             node's model gave it, shards, replicas and the
//                             placement (which nodes hold each shard)
//   bucket neodb-nodes        <node id> -> the node's heartbeat; the bucket's
//                             TTL drops a node that stops beating
//
// Placement is decided when the collection is created, by rendezvous hashing
// of (collection, shard, node) over the live nodes, and stored: it does not
// move when a node blinks. `neodb cluster rebalance` rewrites it
// (ClusterNode::Rebalance): to the same hashing over the nodes live then, so
// that a new node gets its share and a dead node's replicas go elsewhere.
//
// Thread-safety: safe to call concurrently (nats.c's KV handles are).

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "cluster/nats_client.h"
#include "db/collection_spec.h"

namespace neodb::cluster {

struct ShardedCollection {
  db::CollectionSpec spec;  // as the creating node stored it
  std::string model_id;     // the model the creating node gave it: every node must match
  uint32_t shards = 1;
  uint32_t replicas = 1;
  std::vector<std::vector<std::string>> placement;  // [shard] -> node ids
  // Which of the collection's logs is current: 0 as created, +1 with every
  // cluster reindex (shard_map.h's LogName). Replicas read this one's streams.
  uint32_t generation = 0;
  // While a cluster reindex runs: the model it moves to (empty otherwise).
  std::string reindex_to;
  // Dropped (ClusterNode::DropCollection): the entry stays as a tombstone,
  // so a node that was down drops its copy too, and a collection created
  // again under the name starts at the next generation (new log names).
  bool dropped = false;

  std::string log() const;  // LogName(spec.name, generation)
};

// Node ids: 1..64 of [A-Za-z0-9_-].
absl::Status CheckNodeId(const std::string& node_id);

// For each of `shards`, the `replicas` nodes of `nodes` ranked first by
// rendezvous hashing. FAILED_PRECONDITION when fewer nodes than replicas.
absl::StatusOr<std::vector<std::vector<std::string>>> PlaceShards(
    const std::string& collection, uint32_t shards, uint32_t replicas,
    const std::vector<std::string>& nodes);

std::string EncodeShardedCollection(const ShardedCollection& c);
// INVALID_ARGUMENT naming what is wrong (an entry written by another node).
absl::StatusOr<ShardedCollection> DecodeShardedCollection(const std::string& bytes);

struct ClusterMapOptions {
  int replicas = 1;  // of the two buckets (the JetStream cluster's size, up to 5)
  absl::Duration node_ttl = absl::Seconds(10);  // a node unheard of this long is gone
};

class ClusterMap {
 public:
  // Creates the buckets unless they exist, or binds to them as they are (the
  // first node's options win).
  static absl::StatusOr<std::unique_ptr<ClusterMap>> Open(const NatsClient& nats,
                                                          const ClusterMapOptions& options);
  ~ClusterMap();
  ClusterMap(const ClusterMap&) = delete;
  ClusterMap& operator=(const ClusterMap&) = delete;

  // Records that `node_id` is alive (call well within the TTL).
  absl::Status Heartbeat(const std::string& node_id, const std::string& info);
  // Node ids heard from within the TTL, sorted.
  absl::StatusOr<std::vector<std::string>> LiveNodes() const;
  // The same, with what each node's last heartbeat said (its address).
  absl::StatusOr<std::map<std::string, std::string>> LiveNodeInfo() const;

  // ALREADY_EXISTS when a collection of that name is in the map.
  absl::Status Create(const ShardedCollection& c);
  absl::StatusOr<ShardedCollection> Get(const std::string& name) const;
  // The entry and its revision, for Update.
  struct Versioned {
    ShardedCollection collection;
    uint64_t revision = 0;
  };
  absl::StatusOr<Versioned> GetVersioned(const std::string& name) const;
  // Replaces the entry if it is still at `revision` (ABORTED if another
  // node changed it since): a placement is rewritten read-modify-write.
  absl::Status Update(const ShardedCollection& c, uint64_t revision);
  absl::StatusOr<std::vector<ShardedCollection>> List() const;
  absl::Status Remove(const std::string& name);

 private:
  ClusterMap() = default;
  kvStore* collections_ = nullptr;
  kvStore* nodes_ = nullptr;
};

}  // namespace neodb::cluster
