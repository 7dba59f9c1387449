#include "cluster/cluster_node.h"

#include <algorithm>
#include <chrono>
#include <thread>

#include "absl/strings/str_cat.h"
#include "cluster/shard_log.h"
#include "cluster/shard_map.h"
#include "nlohmann/json.hpp"
#include "common/status_macros.h"
#include "spdlog/spdlog.h"

namespace neodb::cluster {

ClusterNode::ClusterNode(engine::Database* db, const NatsClient* nats, ClusterMap* map,
                         ClusterNodeOptions options)
    : db_(db),
      nats_(nats),
      map_(map),
      options_(std::move(options)),
      writer_(db, nats, options_.node_id) {}

ClusterNode::~ClusterNode() {
  Stop();
  std::lock_guard<std::mutex> lock(mu_);
  replicas_.clear();  // each stops its thread
}

absl::Status ClusterNode::Start() {
  RETURN_IF_ERROR(CheckNodeId(options_.node_id));
  RETURN_IF_ERROR(Beat());
  RETURN_IF_ERROR(Reconcile());
  loop_.Start([this] { Run(); });
  return absl::OkStatus();
}

void ClusterNode::Stop() {
  loop_.Stop();
  std::vector<std::thread> jobs;
  {
    std::lock_guard<std::mutex> lock(jobs_mu_);
    jobs.swap(job_threads_);
  }
  for (std::thread& j : jobs) j.join();  // a reindex stops at its next batch (Stopping)
}

bool ClusterNode::Stopping() const { return loop_.stopping(); }

void ClusterNode::Run() {
  absl::Time next_beat = absl::Now() + options_.heartbeat;
  while (loop_.SleepFor(options_.reconcile)) {
    if (absl::Now() >= next_beat) {
      if (absl::Status s = Beat(); !s.ok()) {
        spdlog::warn("node {}: heartbeat failed: {}", options_.node_id, s.ToString());
      }
      next_beat = absl::Now() + options_.heartbeat;
    }
    if (absl::Status s = Reconcile(); !s.ok()) {
      spdlog::warn("node {}: {}", options_.node_id, s.ToString());
    }
  }
}

absl::StatusOr<ShardedCollection> ClusterNode::CreateCollection(db::CollectionSpec spec,
                                                                uint32_t shards,
                                                                uint32_t replicas,
                                                                int log_replicas) {
  ASSIGN_OR_RETURN(std::vector<std::string> live, map_->LiveNodes());
  ShardedCollection c;
  c.shards = shards;
  c.replicas = replicas;
  ASSIGN_OR_RETURN(c.placement, PlaceShards(spec.name, shards, replicas, live));
  // A dropped collection's tombstone is taken over, at its next generation.
  std::optional<ClusterMap::Versioned> tombstone;
  if (absl::StatusOr<ClusterMap::Versioned> old = map_->GetVersioned(spec.name); old.ok()) {
    if (!old->collection.dropped) {
      return absl::AlreadyExistsError(
          absl::StrCat("collection '", spec.name, "' already exists in the cluster"));
    }
    tombstone = *std::move(old);
    c.generation = tombstone->collection.generation + 1;
    // This node's copy of the dropped one goes first (its reconcile may not
    // have come yet), so the name is free here too.
    RETURN_IF_ERROR(DropCopyOf(tombstone->collection));
  }
  // Here first: the spec is checked and the model named before the cluster
  // sees anything.
  ASSIGN_OR_RETURN(engine::CollectionInfo info, db_->CreateCollection(std::move(spec)));
  c.spec = info.spec;  // complete: what every node creates (its own model fills the model fields)
  c.model_id = info.spec.model_id;
  ShardStreamOptions so;
  so.replicas = log_replicas;
  if (so.replicas <= 0) {
    // As many copies of the log as of the shard, as far as the NATS cluster has servers.
    so.replicas = std::min({static_cast<int>(replicas), nats_->ServerCount(), 5});
    if (so.replicas < static_cast<int>(replicas)) {
      spdlog::warn("collection '{}': its shard logs get {} JetStream replica(s), not {}: the "
                   "NATS cluster has {} server(s)",
                   c.spec.name, so.replicas, replicas, nats_->ServerCount());
    }
  }
  for (uint32_t s = 0; s < shards; ++s) {
    RETURN_IF_ERROR(EnsureShardStream(*nats_, c.log(), s, so));
  }
  if (tombstone) {
    RETURN_IF_ERROR(map_->Update(c, tombstone->revision));
  } else {
    RETURN_IF_ERROR(map_->Create(c));
  }
  RETURN_IF_ERROR(Reconcile());  // marks it replicated here, starts the replicas placed here
  return c;
}

namespace {
// Live node id -> what its last heartbeat said. A node whose heartbeat cannot
// be read is left out: not counted live.
absl::StatusOr<std::map<std::string, NodeInfo>> LiveHeartbeats(const ClusterMap& map) {
  ASSIGN_OR_RETURN(auto live, map.LiveNodeInfo());
  std::map<std::string, NodeInfo> out;
  for (const auto& [id, raw] : live) {
    if (absl::StatusOr<NodeInfo> info = DecodeNodeInfo(raw); info.ok()) out[id] = *std::move(info);
  }
  return out;
}

// Live node id -> address.
absl::StatusOr<std::map<std::string, std::string>> LiveAddresses(const ClusterMap& map) {
  ASSIGN_OR_RETURN(auto live, LiveHeartbeats(map));
  std::map<std::string, std::string> out;
  for (const auto& [id, info] : live) out[id] = info.address;
  return out;
}
}  // namespace

absl::StatusOr<std::map<std::string, std::string>> ClusterNode::LiveNodeInfo() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (!live_.empty()) return live_;
  }
  ASSIGN_OR_RETURN(auto live, LiveAddresses(*map_));
  std::lock_guard<std::mutex> lock(mu_);
  live_ = live;
  return live;
}

absl::Status ClusterNode::Reconcile() {
  std::lock_guard<std::mutex> one(reconcile_mu_);
  if (absl::StatusOr<std::map<std::string, NodeInfo>> beats = LiveHeartbeats(*map_); beats.ok()) {
    std::lock_guard<std::mutex> lock(mu_);
    live_.clear();
    for (const auto& [id, info] : *beats) live_[id] = info.address;
    beats_ = *std::move(beats);
  }
  ASSIGN_OR_RETURN(std::vector<ShardedCollection> all, map_->List());
  absl::Status result;
  for (ShardedCollection& c : all) {
    const std::string& name = c.spec.name;
    if (c.dropped) {
      result.Update(DropCopyOf(c));
      continue;
    }
    absl::StatusOr<engine::CollectionInfo> here = db_->DescribeCollection(name);
    // On this node's default model, which must be the collection's (checked
    // below), unless a cluster reindex moved it to another (then rebuilt below).
    if (absl::IsNotFound(here.status())) here = db_->CreateCollection(c.spec);
    if (!here.ok()) {
      result.Update(absl::Status(here.status().code(),
                                 absl::StrCat("creating collection '", name, "' on node ",
                                              options_.node_id, ": ", here.status().message())));
      continue;
    }
    if ((here->spec.model_id != c.model_id && here->spec.model_dir != c.spec.model_dir) ||
        here->spec.created_at_micros != c.spec.created_at_micros) {
      // A cluster reindex moved the collection to another model (its
      // entry names another model directory), or this node's copy is of
      // a collection of the same name dropped since (every node creates
      // its copy from the entry's spec, its creation time included): the
      // copy goes, and the current log's replicas rebuild it.
      here = RebuildCopy(c);
      if (!here.ok()) {
        result.Update(here.status());
        continue;
      }
    }
    if (here->spec.model_id != c.model_id) {
      result.Update(absl::FailedPreconditionError(absl::StrCat(
          "collection '", name, "' holds vectors of '", c.model_id, "', but node ",
          options_.node_id, " has it on '", here->spec.model_id,
          "': start this node with the same model; no replica runs here until then")));
      continue;
    }
    db_->MarkReplicated(name);
    // Shards placed elsewhere now (a rebalance) whose copy is here: a
    // running replica, or a position in the store (this node was down when
    // the placement moved). Dropped outside the lock: it deletes documents.
    std::vector<std::unique_ptr<ShardReplica>> to_drop, stopped;
    {
      std::lock_guard<std::mutex> lock(mu_);
      for (uint32_t s = 0; s < c.shards; ++s) {
        const std::vector<std::string>& nodes = c.placement[s];
        const bool placed = std::find(nodes.begin(), nodes.end(), options_.node_id) != nodes.end();
        auto it = replicas_.find({name, s});
        if (it != replicas_.end() && it->second->log() != c.log()) {
          // A replica of an older generation's log (a reindex to the same
          // model keeps the copy): the new log's replica takes over.
          stopped.push_back(std::move(it->second));
          replicas_.erase(it);
          it = replicas_.end();
        }
        if (!placed) {
          if (it != replicas_.end()) {
            to_drop.push_back(std::move(it->second));
            replicas_.erase(it);
          } else if (db_->SourcePositionOf(name, ShardStreamName(c.log(), s)).value_or(0) > 0) {
            to_drop.push_back(
                std::make_unique<ShardReplica>(db_, nats_, name, c.log(), s, c.shards));
          }
          continue;
        }
        if (it == replicas_.end()) {
          auto r = std::make_unique<ShardReplica>(db_, nats_, name, c.log(), s, c.shards);
          r->Start();
          replicas_[{name, s}] = std::move(r);
        }
      }
      entries_[name] = c;
    }
    for (std::unique_ptr<ShardReplica>& r : to_drop) {
      if (absl::Status st = r->DropCopy(); !st.ok()) {
        // Retried by the next reconcile (its position is still in the store).
        result.Update(absl::Status(st.code(), absl::StrCat("dropping this node's copy of ",
                                                           r->stream(), ": ", st.message())));
      }
    }
  }
  return result;
}

absl::Status ClusterNode::DropCollection(const std::string& collection) {
  ASSIGN_OR_RETURN(ClusterMap::Versioned v, map_->GetVersioned(collection));
  ShardedCollection c = v.collection;
  if (c.dropped) {
    return absl::NotFoundError(absl::StrCat("collection '", collection, "' does not exist"));
  }
  if (!c.reindex_to.empty()) {
    return absl::FailedPreconditionError(absl::StrCat(
        "collection '", collection, "' is being reindexed (to ", c.reindex_to,
        "); drop it afterwards"));
  }
  c.dropped = true;
  RETURN_IF_ERROR(map_->Update(c, v.revision));
  // The entry says dropped first: a stream deleted before it would make the
  // nodes' writes fail rather than be refused as to a dropped collection.
  for (uint32_t s = 0; s < c.shards; ++s) {
    absl::Status st = DeleteShardStream(*nats_, c.log(), s);
    if (!st.ok() && !absl::IsNotFound(st)) {
      spdlog::warn("drop of '{}': its stream {} stays: {}", collection,
                   ShardStreamName(c.log(), s), st.ToString());
    }
  }
  return Reconcile();
}

void ClusterNode::StopReplicasOf(const std::string& collection) {
  std::vector<std::unique_ptr<ShardReplica>> old;
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (auto it = replicas_.begin(); it != replicas_.end();) {
      if (it->first.first != collection) {
        ++it;
        continue;
      }
      old.push_back(std::move(it->second));
      it = replicas_.erase(it);
    }
  }
  old.clear();  // each stops its thread (outside the lock: a poll may be applying)
}

absl::Status ClusterNode::DropCopyOf(const ShardedCollection& c) {
  const std::string& name = c.spec.name;
  bool known = false;
  {
    std::lock_guard<std::mutex> lock(mu_);
    known = entries_.erase(name) > 0;
  }
  StopReplicasOf(name);
  // This node's copy: one it replicated since it started, or one made from
  // the dropped entry (the same creation time) while it was down.
  absl::StatusOr<engine::CollectionInfo> here = db_->DescribeCollection(name);
  if (!here.ok()) return absl::OkStatus();
  if (!known && here->spec.created_at_micros != c.spec.created_at_micros) {
    return absl::OkStatus();  // a collection of this node's own
  }
  spdlog::info("node {}: collection '{}' was dropped from the cluster; dropping this node's copy",
               options_.node_id, name);
  absl::Status s = db_->DropReplicatedCopy(name);
  if (!s.ok() && !absl::IsNotFound(s)) {
    return absl::Status(s.code(), absl::StrCat("dropping node ", options_.node_id, "'s copy of '",
                                               name, "': ", s.message()));
  }
  return absl::OkStatus();
}

absl::StatusOr<engine::CollectionInfo> ClusterNode::RebuildCopy(const ShardedCollection& c) {
  const std::string& name = c.spec.name;
  {
    std::lock_guard<std::mutex> lock(mu_);
    // Writes here go to the new log from now on (they fail until the copy
    // below is made: it embeds them).
    entries_[name] = c;
  }
  StopReplicasOf(name);
  spdlog::info("node {}: collection '{}' moved to model {} (log {}); rebuilding this node's copy",
               options_.node_id, name, c.model_id, c.log());
  if (absl::Status s = db_->DropReplicatedCopy(name); !s.ok() && !absl::IsNotFound(s)) {
    return absl::Status(s.code(), absl::StrCat("dropping node ", options_.node_id,
                                               "'s copy of '", name, "': ", s.message()));
  }
  absl::StatusOr<engine::CollectionInfo> made = db_->CreateCollectionAs(c.spec);
  if (!made.ok()) {
    return absl::Status(made.status().code(),
                        absl::StrCat("creating collection '", name, "' on model ", c.model_id,
                                     " on node ", options_.node_id, ": ",
                                     made.status().message()));
  }
  return made;
}

absl::StatusOr<std::vector<ShardMove>> ClusterNode::Rebalance(const std::string& collection,
                                                             absl::Duration timeout) {
  const absl::Time deadline = absl::Now() + timeout;
  ASSIGN_OR_RETURN(ClusterMap::Versioned v, map_->GetVersioned(collection));
  if (v.collection.dropped) {
    return absl::NotFoundError(absl::StrCat("collection '", collection, "' does not exist"));
  }
  ASSIGN_OR_RETURN(std::vector<std::string> live, map_->LiveNodes());
  const ShardedCollection& now = v.collection;
  ASSIGN_OR_RETURN(std::vector<std::vector<std::string>> target,
                   PlaceShards(collection, now.shards, now.replicas, live));
  auto has = [](const std::vector<std::string>& nodes, const std::string& n) {
    return std::find(nodes.begin(), nodes.end(), n) != nodes.end();
  };
  // Step 1: each shard on its old live nodes and its new ones, old first
  // (a fan-out asks the first live node of a placement: the old ones
  // answer while the new ones catch up). A dead node leaves here already.
  std::vector<ShardMove> moves;
  ShardedCollection grown = now;
  for (uint32_t s = 0; s < now.shards; ++s) {
    ShardMove m;
    m.shard = s;
    // Kept nodes, then the leaving ones still live, then the new ones; at
    // most twice the replicas (the map's bound), leaving ones cut first.
    std::vector<std::string> both, leaving;
    for (const std::string& n : now.placement[s]) {
      if (has(target[s], n)) {
        both.push_back(n);
        continue;
      }
      m.removed.push_back(n);
      if (has(live, n)) leaving.push_back(n);
    }
    for (const std::string& n : target[s]) {
      if (!has(now.placement[s], n)) m.added.push_back(n);
    }
    const size_t room = 2 * now.replicas - both.size() - m.added.size();
    if (leaving.size() > room) leaving.resize(room);
    both.insert(both.end(), leaving.begin(), leaving.end());
    both.insert(both.end(), m.added.begin(), m.added.end());
    grown.placement[s] = both;
    if (!m.added.empty() || !m.removed.empty()) moves.push_back(std::move(m));
  }
  if (moves.empty()) return moves;
  spdlog::info("rebalance of '{}': {} shard(s) move; adding the new replicas", collection,
               moves.size());
  RETURN_IF_ERROR(map_->Update(grown, v.revision));
  RETURN_IF_ERROR(Reconcile());
  // Step 2: wait until every new replica has applied its stream as it stood
  // once they were placed (their heartbeats carry their positions).
  std::map<uint32_t, uint64_t> last;
  for (const ShardMove& m : moves) {
    if (m.added.empty()) continue;
    ASSIGN_OR_RETURN(last[m.shard], ShardLastSequence(*nats_, now.log(), m.shard));
  }
  while (true) {
    ASSIGN_OR_RETURN(auto beats, LiveHeartbeats(*map_));
    bool caught_up = true;
    for (const ShardMove& m : moves) {
      const std::string key = absl::StrCat(now.log(), "/", m.shard);
      for (const std::string& n : m.added) {
        auto b = beats.find(n);
        if (b == beats.end()) {  // not live
          caught_up = false;
          continue;
        }
        auto p = b->second.positions.find(key);
        const uint64_t position = p == b->second.positions.end() ? 0 : p->second;
        if (position < last[m.shard]) caught_up = false;
      }
    }
    if (caught_up) break;
    if (absl::Now() >= deadline) {
      return absl::DeadlineExceededError(absl::StrCat(
          "rebalance of '", collection, "': the new replicas have not caught up yet; the placement "
          "keeps old and new replicas (reads go to the old ones): run rebalance again to finish"));
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
  }
  // Step 3: the old replicas leave; each drops its copy at its next reconcile.
  ASSIGN_OR_RETURN(ClusterMap::Versioned after, map_->GetVersioned(collection));
  if (after.collection.placement != grown.placement) {
    return absl::AbortedError(absl::StrCat("collection '", collection,
                                           "' changed in the map meanwhile; run rebalance again"));
  }
  ShardedCollection done = after.collection;
  done.placement = target;
  RETURN_IF_ERROR(map_->Update(done, after.revision));
  RETURN_IF_ERROR(Reconcile());
  spdlog::info("rebalance of '{}' done", collection);
  return moves;
}

absl::StatusOr<ShardedCollection> ClusterNode::Entry(const std::string& collection) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (auto it = entries_.find(collection); it != entries_.end()) return it->second;
  }
  // Created by another node since the last reconcile.
  RETURN_IF_ERROR(Reconcile());
  std::lock_guard<std::mutex> lock(mu_);
  if (auto it = entries_.find(collection); it != entries_.end()) return it->second;
  return absl::NotFoundError(absl::StrCat("collection '", collection, "' is not in the cluster"));
}

absl::StatusOr<ShardedWrite> ClusterNode::Upsert(const std::string& collection,
                                                 std::vector<engine::DocumentInput> docs,
                                                 absl::Time deadline) {
  ASSIGN_OR_RETURN(ShardedCollection c, Entry(collection));
  const std::function<bool()> current = StillCurrent(c);
  absl::StatusOr<ShardedWrite> w = writer_.Upsert(c, std::move(docs), deadline, current);
  return SwitchedDuring(c, current, std::move(w));
}

absl::StatusOr<ShardedWrite> ClusterNode::Delete(const std::string& collection,
                                                 const std::vector<std::string>& ids,
                                                 absl::Time deadline) {
  ASSIGN_OR_RETURN(ShardedCollection c, Entry(collection));
  const std::function<bool()> current = StillCurrent(c);
  return SwitchedDuring(c, current, writer_.Delete(c, ids, deadline, current));
}

absl::StatusOr<ShardedWrite> ClusterNode::SwitchedDuring(const ShardedCollection& c,
                                                         const std::function<bool()>& current,
                                                         absl::StatusOr<ShardedWrite> w) {
  // A write that failed while a cluster reindex switched the collection's
  // log (this node's copy dropped and made again, the old log sealed) is
  // worth retrying as it is: it then goes to the new log. UNAVAILABLE, as
  // for any failure whose change may have been stored (a retry settles it);
  // a sealed log's refusal (ABORTED) stored nothing and stays as it is. A
  // collection not found here while its entry is current: this node is
  // making its copy again.
  if (w.ok() || absl::IsAborted(w.status())) return w;
  if (current() && !absl::IsNotFound(w.status())) return w;
  return absl::UnavailableError(absl::StrCat("collection '", c.spec.name,
                                             "' is switching to a reindexed log on this node (",
                                             w.status().message(), "); retry"));
}

std::function<bool()> ClusterNode::StillCurrent(const ShardedCollection& c) {
  return [this, name = c.spec.name, generation = c.generation] {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = entries_.find(name);
    return it != entries_.end() && it->second.generation == generation;
  };
}

absl::Status ClusterNode::SetAddress(const std::string& address) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    options_.address = address;
  }
  return Beat();
}

absl::Status ClusterNode::Beat() {
  NodeInfo info;
  {
    std::lock_guard<std::mutex> lock(mu_);
    info.address = options_.address;
    for (const auto& [key, r] : replicas_) {
      const std::string k = absl::StrCat(r->log(), "/", key.second);
      info.positions[k] = r->position();
      if (!r->ready()) info.catching_up.insert(k);
    }
  }
  return map_->Heartbeat(options_.node_id, EncodeNodeInfo(info));
}

std::string EncodeNodeInfo(const NodeInfo& info) {
  nlohmann::json j;
  j["address"] = info.address;
  j["positions"] = info.positions;
  j["catching_up"] = info.catching_up;
  return j.dump();
}

absl::StatusOr<NodeInfo> DecodeNodeInfo(const std::string& bytes) {
  nlohmann::json j = nlohmann::json::parse(bytes, nullptr, false);
  if (j.is_discarded() || !j.is_object() || !j.contains("address") || !j["address"].is_string() ||
      !j.contains("positions") || !j["positions"].is_object()) {
    return absl::InvalidArgumentError("a node's heartbeat is not {address, positions}");
  }
  NodeInfo info;
  info.address = j["address"].get<std::string>();
  for (const auto& [key, value] : j["positions"].items()) {
    if (!value.is_number_unsigned()) {
      return absl::InvalidArgumentError("a node's heartbeat has a position that is not a count");
    }
    info.positions[key] = value.get<uint64_t>();
  }
  if (j.contains("catching_up")) {  // absent from older nodes' heartbeats
    if (!j["catching_up"].is_array()) {
      return absl::InvalidArgumentError("a node's heartbeat has a catching_up that is no list");
    }
    for (const nlohmann::json& k : j["catching_up"]) {
      if (!k.is_string()) {
        return absl::InvalidArgumentError("a node's heartbeat lists a replica that is no string");
      }
      info.catching_up.insert(k.get<std::string>());
    }
  }
  return info;
}

absl::StatusOr<ClusterStatus> ClusterNode::Status() {
  ClusterStatus out;
  ASSIGN_OR_RETURN(auto infos, LiveHeartbeats(*map_));
  for (const auto& [id, info] : infos) out.nodes[id] = info.address;
  ASSIGN_OR_RETURN(std::vector<ShardedCollection> all, map_->List());
  for (ShardedCollection& c : all) {
    if (c.dropped) continue;
    CollectionStatus cs;
    for (uint32_t s = 0; s < c.shards; ++s) {
      ShardStatus ss;
      ss.shard = s;
      ASSIGN_OR_RETURN(ss.last_sequence, ShardLastSequence(*nats_, c.log(), s));
      const std::string key = absl::StrCat(c.log(), "/", s);
      for (const std::string& n : c.placement[s]) {
        ReplicaStatus r;
        r.node_id = n;
        if (auto it = infos.find(n); it != infos.end()) {
          r.live = true;
          if (auto p = it->second.positions.find(key); p != it->second.positions.end()) {
            r.position = p->second;
          }
        }
        ss.replicas.push_back(r);
      }
      cs.shards.push_back(std::move(ss));
    }
    cs.collection = std::move(c);
    out.collections.push_back(std::move(cs));
  }
  return out;
}

bool ClusterNode::IsSharded(const std::string& collection) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (entries_.count(collection) > 0) return true;
  }
  if (db_->HasCollection(collection)) return false;  // a collection of this node
  if (absl::Status s = Reconcile(); !s.ok()) {
    spdlog::warn("node {}: {}", options_.node_id, s.ToString());
  }
  std::lock_guard<std::mutex> lock(mu_);
  return entries_.count(collection) > 0;
}

bool ClusterNode::HoldsEveryShard(const std::string& collection) const {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = entries_.find(collection);
  if (it == entries_.end()) return false;
  for (uint32_t s = 0; s < it->second.shards; ++s) {
    auto r = replicas_.find({collection, s});
    if (r == replicas_.end() || !r->second->ready() || r->second->log() != it->second.log()) {
      return false;
    }
  }
  return true;
}

std::vector<LocalReplicaStats> ClusterNode::LocalReplicas() const {
  std::vector<LocalReplicaStats> out;
  std::vector<std::string> logs;  // each one's log
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (const auto& [key, r] : replicas_) {
      out.push_back({key.first, key.second, r->position(), std::nullopt, r->applied(),
                     r->resyncs(), r->status().ok()});
      logs.push_back(r->log());
    }
  }
  for (size_t i = 0; i < out.size(); ++i) {
    LocalReplicaStats& r = out[i];
    absl::StatusOr<uint64_t> last = ShardLastSequence(*nats_, logs[i], r.shard);
    if (last.ok()) r.stream_last = *last;
  }
  return out;
}

bool ClusterNode::Serves(const std::string& node_id, const ShardedCollection& c,
                         uint32_t shard) const {
  if (node_id == options_.node_id) {
    ShardReplica* r = Replica(c.spec.name, shard);
    return r != nullptr && r->log() == c.log() && r->ready();
  }
  std::lock_guard<std::mutex> lock(mu_);
  auto it = beats_.find(node_id);
  if (it == beats_.end()) return false;
  const std::string key = absl::StrCat(c.log(), "/", shard);
  return it->second.positions.count(key) > 0 && it->second.catching_up.count(key) == 0;
}

ShardReplica* ClusterNode::Replica(const std::string& collection, uint32_t shard) const {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = replicas_.find({collection, shard});
  return it == replicas_.end() ? nullptr : it->second.get();
}

absl::Status ClusterNode::WaitFor(const std::string& collection, const ConsistencyToken& token,
                                  absl::Duration timeout, bool held_only) {
  const absl::Time deadline = absl::Now() + timeout;
  for (const auto& [shard, seq] : token) {
    ShardReplica* r = Replica(collection, shard);
    if (r == nullptr && held_only) continue;
    if (r == nullptr) {
      return absl::FailedPreconditionError(absl::StrCat("shard ", shard, " of '", collection,
                                                        "' has no replica on node ",
                                                        options_.node_id));
    }
    RETURN_IF_ERROR(r->WaitFor(seq, deadline - absl::Now()));
  }
  return absl::OkStatus();
}

}  // namespace neodb::cluster
