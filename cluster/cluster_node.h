#pragma once
// ClusterNode: one neodb node's part in a cluster. It beats its heart into the
// cluster map, creates sharded collections (placement over the live nodes,
// the shards' streams, the map entry), and keeps itself in line with the map
// (Reconcile): every sharded collection exists here, so that this node can
// check and embed writes for it (the encoder tier is every node), and a
// replica runs for each shard placed here. Writes go through its ShardWriter.
//
// Thread-safety: safe to call concurrently.

#include <condition_variable>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "cluster/background_loop.h"
#include "cluster/cluster_map.h"
#include "cluster/collection_backup.h"
#include "cluster/fan_out_stats.h"
#include "cluster/nats_client.h"
#include "cluster/shard_replica.h"
#include "cluster/shard_writer.h"
#include "engine/database.h"

namespace neodb::cluster {

// What a node's heartbeat says: the address other nodes dial, and where each
// of its replicas stands ("<collection>/<shard>" -> position).
struct NodeInfo {
  std::string address;
  std::map<std::string, uint64_t> positions;  // "<log>/<shard>" (shard_map.h's LogName)
  std::set<std::string> catching_up;          // those not yet ShardReplica::ready()
};
std::string EncodeNodeInfo(const NodeInfo& info);
// A heartbeat from another node is hostile input: INVALID_ARGUMENT when malformed.
absl::StatusOr<NodeInfo> DecodeNodeInfo(const std::string& bytes);

// A sharded collection's replicas as the heartbeats report them.
struct ReplicaStatus {
  std::string node_id;
  uint64_t position = 0;
  bool live = false;
};
struct ShardStatus {
  uint32_t shard = 0;
  uint64_t last_sequence = 0;
  std::vector<ReplicaStatus> replicas;  // in placement order
};
struct CollectionStatus {
  ShardedCollection collection;
  std::vector<ShardStatus> shards;
};
struct ClusterStatus {
  std::map<std::string, std::string> nodes;  // live node id -> address
  std::vector<CollectionStatus> collections;
};

// One of this node's replicas, for the metrics.
struct LocalReplicaStats {
  std::string collection;
  uint32_t shard = 0;
  uint64_t position = 0;
  std::optional<uint64_t> stream_last;  // the shard stream's last sequence (unset: unreadable)
  uint64_t applied = 0;
  uint64_t resyncs = 0;
  bool healthy = true;  // its last attempt to apply succeeded
};

// What a rebalance moved: a shard's replicas added on nodes and removed from others.
struct ShardMove {
  uint32_t shard = 0;
  std::vector<std::string> added;
  std::vector<std::string> removed;
};

struct ClusterNodeOptions {
  std::string node_id;  // CheckNodeId
  std::string address;  // the node's gRPC address, in its heartbeats (SetAddress)
  absl::Duration heartbeat = absl::Seconds(2);  // well within the map's node TTL
  absl::Duration reconcile = absl::Milliseconds(500);
};

class ClusterNode {
 public:
  // `db`, `nats` and `map` outlive the node.
  ClusterNode(engine::Database* db, const NatsClient* nats, ClusterMap* map,
              ClusterNodeOptions options);
  ~ClusterNode();
  ClusterNode(const ClusterNode&) = delete;
  ClusterNode& operator=(const ClusterNode&) = delete;

  // Beats once and reconciles once (errors returned), then keeps doing both
  // in the background until Stop.
  absl::Status Start();
  void Stop();

  // Creates `spec` sharded `shards` ways with `replicas` copies of each shard
  // placed over the live nodes, and its shard streams with `log_replicas`
  // JetStream replicas (0: as many as `replicas`, but no more than the NATS
  // cluster's servers, with a warning). The collection is created here first (a bad spec fails before
  // anything reaches the cluster). ALREADY_EXISTS when the name is taken.
  absl::StatusOr<ShardedCollection> CreateCollection(db::CollectionSpec spec, uint32_t shards,
                                                     uint32_t replicas, int log_replicas = 0);

  // Drops `collection` from the cluster: its entry becomes a tombstone
  // (ShardedCollection::dropped), its log's streams are deleted, and every
  // node drops its copy at its next reconcile (one that was down, when it
  // is back). NOT_FOUND when there is none; FAILED_PRECONDITION while a
  // cluster reindex runs.
  absl::Status DropCollection(const std::string& collection);

  // `collection`'s backup from its log into the new directory `dir`
  // (collection_backup.h).
  absl::StatusOr<CollectionBackup> BackupCollection(const std::string& collection,
                                                   const std::string& dir);
  // A sharded collection named `name` (empty: the backup's) with `shards`
  // and `replicas` (0: the backup's) made from the backup in `dir`: the
  // backup is checked whole first (a damaged one changes nothing), then the
  // collection is created and the changes published to its log. The
  // backup's model must be this node's (FAILED_PRECONDITION otherwise, the
  // collection not created).
  struct Restored {
    ShardedCollection collection;
    uint64_t changes = 0;    // published
    ConsistencyToken token;  // a read with it sees them all
  };
  absl::StatusOr<Restored> RestoreCollection(
      const std::string& dir, const std::string& name, uint32_t shards, uint32_t replicas,
      absl::Time deadline);

  // Brings this node in line with the map (see above). A collection whose
  // model here differs from the one it was created with is reported, and
  // no replica runs for it here.
  absl::Status Reconcile();

  // Places `collection`'s shards again by the same hashing over the nodes
  // live now (a new node gets its share, a dead node's replicas go to live
  // ones), without a moment with fewer caught-up replicas than before: new
  // replicas are added next to the old ones, and the old ones leave (each
  // drops its copy) only once every new one has applied its stream.
  // DEADLINE_EXCEEDED after `timeout` with both in place (run it again);
  // ABORTED when another node changed the entry meanwhile. Returns the
  // moves (none: already placed so).
  absl::StatusOr<std::vector<ShardMove>> Rebalance(const std::string& collection,
                                                  absl::Duration timeout);

  absl::StatusOr<ShardedWrite> Upsert(const std::string& collection,
                                      std::vector<engine::DocumentInput> docs,
                                      absl::Time deadline);
  absl::StatusOr<ShardedWrite> Delete(const std::string& collection,
                                      const std::vector<std::string>& ids, absl::Time deadline);
  // Waits until this node's replicas have applied `token` (read-your-writes).
  // FAILED_PRECONDITION when a shard of the token has no replica here, unless
  // `held_only` (a fan-out's part: only the shards held here count).
  absl::Status WaitFor(const std::string& collection, const ConsistencyToken& token,
                       absl::Duration timeout, bool held_only = false);

  // Whether `collection` is a sharded collection of the cluster. Known ones
  // answer from the last reconcile (no NATS call on the write and search
  // paths); a name this node has no collection of reconciles first, so a
  // collection created on another node a moment ago is found.
  bool IsSharded(const std::string& collection);
  // Whether every shard of `collection` has a ready replica on this node
  // (ShardReplica::ready), so a search here covers the whole collection.
  bool HoldsEveryShard(const std::string& collection) const;

  // The collection's entry in the map (placement included).
  absl::StatusOr<ShardedCollection> Entry(const std::string& collection);
  // The gRPC address this node's heartbeats give from now on (known once
  // the server listens); beats at once.
  absl::Status SetAddress(const std::string& address);
  // Live nodes and their addresses, as of the last reconcile (listing the
  // bucket costs milliseconds: not on every search).
  absl::StatusOr<std::map<std::string, std::string>> LiveNodeInfo();
  // The cluster as the map, the heartbeats and the streams say now.
  absl::StatusOr<ClusterStatus> Status();
  // Whether `shard` of `collection` has a replica on this node.
  bool Holds(const std::string& collection, uint32_t shard) const {
    return Replica(collection, shard) != nullptr;
  }

  // This node's replicas as they stand now (one NATS request each, for the
  // stream's last sequence: for a metrics scrape, not a request path).
  std::vector<LocalReplicaStats> LocalReplicas() const;
  // The latency of this node's fan-outs (api/fan_out.h records them).
  FanOutStats& fan_out_stats() { return fan_out_stats_; }

  // Whether node `node_id` answers reads for `shard` of `c`: it has a
  // replica of the shard on c's current log that is ready (this node: now;
  // another: as its heartbeat said at the last reconcile).
  bool Serves(const std::string& node_id, const ShardedCollection& c, uint32_t shard) const;

  // Re-embeds `collection` with the model in `model_dir` into a new
  // generation of its log and switches the cluster to it: see
  // cluster_reindex.cc. `progress` is told (done, total) as it goes.
  // Runs to the end (or an error) before it returns.
  absl::Status Reindex(const std::string& collection, const std::string& model_dir,
                       const std::function<void(uint64_t, uint64_t)>& progress);

  // Reindex in a background job of this node (the Admin Reindex of a
  // sharded collection). The target is checked before the job starts (a bad
  // model is this call's error). The same request while its job runs joins
  // it; another is FAILED_PRECONDITION.
  absl::Status StartReindex(const std::string& collection, const std::string& model_dir);
  // The job's progress on this node; a job another node runs shows as
  // running (from the map entry); otherwise idle.
  absl::StatusOr<engine::ReindexProgress> ReindexProgressOf(const std::string& collection);

  // This node's replica of the shard; null when the shard is not placed here.
  ShardReplica* Replica(const std::string& collection, uint32_t shard) const;
  const std::string& node_id() const { return options_.node_id; }

 private:
  void Run();
  absl::Status Beat();
  bool Stopping() const;  // Stop was called
  // Whether c's generation is still the collection's, as this node last read the map.
  std::function<bool()> StillCurrent(const ShardedCollection& c);
  // `w`, or UNAVAILABLE (retry) when it failed during a switch of c's log.
  static absl::StatusOr<ShardedWrite> SwitchedDuring(const ShardedCollection& c,
                                                     const std::function<bool()>& current,
                                                     absl::StatusOr<ShardedWrite> w);
  // This node's copy of c's collection, of an older generation's model or
  // of a dropped collection of the same name, dropped with its replicas and
  // created again on c's spec (Reconcile).
  absl::StatusOr<engine::CollectionInfo> RebuildCopy(const ShardedCollection& c);
  // Stops and removes this node's replicas of `collection`.
  void StopReplicasOf(const std::string& collection);
  // c is dropped: this node's replicas stop and its copy goes (Reconcile).
  absl::Status DropCopyOf(const ShardedCollection& c);

  engine::Database* const db_;
  const NatsClient* const nats_;
  ClusterMap* const map_;
  ClusterNodeOptions options_;  // address guarded by mu_
  ShardWriter writer_;
  FanOutStats fan_out_stats_;

  mutable std::mutex mu_;  // guards the members below
  std::map<std::string, ShardedCollection> entries_;  // the map as last read
  std::map<std::string, std::string> live_;           // live node -> address, as last read
  std::map<std::string, NodeInfo> beats_;             // live node -> its heartbeat, as last read
  std::map<std::pair<std::string, uint32_t>, std::unique_ptr<ShardReplica>> replicas_;
  BackgroundLoop loop_;      // Run: heartbeats and reconciles (its own lock)
  std::mutex reconcile_mu_;  // one reconcile at a time

  struct ReindexJob {
    std::string model_dir;
    engine::ReindexProgress progress;
  };
  std::mutex jobs_mu_;  // guards jobs_ and job_threads_
  std::map<std::string, ReindexJob> jobs_;  // by collection: the latest job here
  std::vector<std::thread> job_threads_;    // joined by Stop
};

}  // namespace neodb::cluster
