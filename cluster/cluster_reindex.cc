// ClusterNode::Reindex: a sharded collection re-embedded onto another model
// (or its own, with new settings) without stopping its writes, and with the
// vectors still made once, here, and carried by the log (replicas never embed).
//
// A collection's log has generations (shard_map.h's LogName): the reindex
// writes generation N+1 beside N and then switches the cluster to it.
//   1. The map entry records the target model (reindex_to): another reindex
//      to another model is refused meanwhile, the same one joins (resumes).
//   2. Generation N+1's streams are created like N's.
//   3. Copy: each shard of N is read from its first message (its compacted
//      log holds every document's last change), the upserts embedded with the
//      target model here (Database::PrepareUpsertAs) and published, with the
//      tombstones, to N+1 under publish ids made from N's sequences (a copy
//      made twice is stored once). Writes keep going to N meanwhile and are
//      copied as they come, round after round.
//   4. Fence: N's streams are sealed (JetStream refuses every publish from
//      then on: a write still on its way gets ABORTED and retries), and what
//      reached N before the seal is copied. N+1 now holds all of N.
//   5. Switch: the entry moves to generation N+1 and the target model, in one
//      compare-and-set. Each node, at its next reconcile, drops its copy of
//      the old model and rebuilds it from N+1's streams (ShardReplica reads a
//      new log from its start); until a node's new replica has caught up the
//      fan-out asks another node for that shard (ClusterNode::Serves).
//   6. N's streams are deleted once no live node's heartbeat lists them.
// Writes are refused only between 4 and 5 (a copy of what arrived during
// the last round) and, on each node, until it has read the new entry (a
// write embedded with the old model is UNAVAILABLE: ShardWriter). A crash
// before 5 leaves the collection on N (sealed after 4: run the reindex again
// to finish it, it resumes); after 5 the cluster is on N+1.
#include <algorithm>
#include <chrono>
#include <map>
#include <thread>

#include "absl/strings/str_cat.h"
#include "cluster/cluster_node.h"
#include "cluster/shard_log.h"
#include "cluster/shard_map.h"
#include "common/status_macros.h"
#include "spdlog/spdlog.h"

namespace neodb::cluster {
namespace {

// Changes read, embedded and published together.
constexpr size_t kCopyBatch = 64;
// Copy rounds before the fence; they stop early once a round copies fewer
// changes than this.
constexpr int kCopyRounds = 16;
constexpr uint64_t kFewChanges = 64;
constexpr absl::Duration kReadWait = absl::Seconds(10);
constexpr absl::Duration kPublishWait = absl::Seconds(60);
constexpr absl::Duration kRetireWait = absl::Seconds(30);

struct SubDeleter {
  void operator()(natsSubscription* s) const {
    natsSubscription_Unsubscribe(s);
    natsSubscription_Destroy(s);
  }
};
using SubPtr = std::unique_ptr<natsSubscription, SubDeleter>;
struct MsgDeleter {
  void operator()(natsMsg* m) const { natsMsg_Destroy(m); }
};
using MsgPtr = std::unique_ptr<natsMsg, MsgDeleter>;

// Copies one shard of the old log into the new one, from `*copied` + 1 to
// the stream's `last` sequence; *copied ends at `last`.
class ShardCopier {
 public:
  ShardCopier(engine::Database* db, const NatsClient* nats, ShardWriter* writer,
              const ShardedCollection& from, const ShardedCollection& to, uint32_t shard)
      : db_(db), nats_(nats), writer_(writer), from_(from), to_(to), shard_(shard) {}

  absl::StatusOr<uint64_t> CopyTo(uint64_t last, uint64_t* copied) {
    uint64_t n = 0;
    if (*copied >= last) return n;
    SubPtr sub;
    {
      jsSubOptions so;
      jsSubOptions_Init(&so);
      const std::string stream = ShardStreamName(from_.log(), shard_);
      so.Stream = stream.c_str();
      so.Ordered = true;
      so.Config.DeliverPolicy = js_DeliverByStartSequence;
      so.Config.OptStartSeq = *copied + 1;
      const std::string subjects = ShardSubjects(from_.log(), shard_);
      natsSubscription* raw = nullptr;
      jsErrCode jerr = static_cast<jsErrCode>(0);
      natsStatus s =
          js_SubscribeSync(&raw, nats_->jetstream(), subjects.c_str(), nullptr, &so, &jerr);
      if (s != NATS_OK) {
        return NatsStatus(s, jerr, absl::StrCat("reading ", stream, " for the reindex"));
      }
      sub.reset(raw);
    }
    // Batches of changes in stream order, one per document (the last).
    std::vector<ShardChange> batch;
    std::vector<uint64_t> sequences;
    auto flush = [&]() -> absl::Status {
      if (batch.empty()) return absl::OkStatus();
      RETURN_IF_ERROR(Publish(batch, sequences));
      n += batch.size();
      *copied = sequences.back();
      batch.clear();
      sequences.clear();
      return absl::OkStatus();
    };
    while (*copied < last && (batch.empty() || sequences.back() < last)) {
      natsMsg* raw = nullptr;
      natsStatus s = natsSubscription_NextMsg(&raw, sub.get(),
                                              absl::ToInt64Milliseconds(kReadWait));
      // The message at `last` (or a later change of its document, which
      // compaction kept in its place) is always there to come: a silence is
      // the servers', never the end of the stream.
      if (s != NATS_OK) {
        return NatsStatus(s, static_cast<jsErrCode>(0),
                          absl::StrCat("reading ", ShardStreamName(from_.log(), shard_)));
      }
      MsgPtr msg(raw);
      jsMsgMetaData* meta = nullptr;
      if (natsMsg_GetMetaData(&meta, msg.get()) != NATS_OK) {
        return absl::InternalError("a shard message without its JetStream metadata");
      }
      const uint64_t seq = meta->Sequence.Stream;
      jsMsgMetaData_Destroy(meta);
      if (seq <= *copied || (!sequences.empty() && seq <= sequences.back())) continue;
      const std::string_view data(natsMsg_GetData(msg.get()),
                                  static_cast<size_t>(natsMsg_GetDataLength(msg.get())));
      ASSIGN_OR_RETURN(ShardChange change, DecodeShardChange(data));
      // One change per document in a batch: a later one replaces it.
      auto same = std::find_if(batch.begin(), batch.end(), [&](const ShardChange& c) {
        return c.doc_id() == change.doc_id();
      });
      if (same != batch.end()) {
        sequences.erase(sequences.begin() + (same - batch.begin()));
        batch.erase(same);
      }
      batch.push_back(std::move(change));
      sequences.push_back(seq);
      if (batch.size() >= kCopyBatch || seq >= last) RETURN_IF_ERROR(flush());
    }
    RETURN_IF_ERROR(flush());
    return n;
  }

 private:
  // Embeds the batch's upserts with the target model and publishes the
  // batch to the new log, each under an id made from its old sequence.
  absl::Status Publish(std::vector<ShardChange>& batch, const std::vector<uint64_t>& sequences) {
    std::vector<engine::DocumentInput> inputs;
    for (const ShardChange& c : batch) {
      if (c.op != ShardChange::Op::kUpsert) continue;
      inputs.push_back({c.document.id, c.document.text, c.document.metadata, std::nullopt, ""});
    }
    if (!inputs.empty()) {
      ASSIGN_OR_RETURN(engine::Collection::PreparedWrite made,
                       db_->PrepareUpsertAs(to_.spec, std::move(inputs),
                                            absl::Now() + kPublishWait));
      size_t k = 0;
      for (ShardChange& c : batch) {
        if (c.op != ShardChange::Op::kUpsert) continue;
        c.document = std::move(made.documents[k++]);
      }
    }
    std::vector<std::string> ids;
    for (uint64_t seq : sequences) {
      ids.push_back(absl::StrCat("reindex-", to_.log(), "-", shard_, "-", seq));
    }
    ConsistencyToken ignored;
    return writer_->PublishWithIds(to_.log(), to_.shards, batch, ids,
                                   absl::Now() + kPublishWait, &ignored);
  }

  engine::Database* const db_;
  const NatsClient* const nats_;
  ShardWriter* const writer_;
  const ShardedCollection& from_;
  const ShardedCollection& to_;
  const uint32_t shard_;
};

}  // namespace

absl::Status ClusterNode::Reindex(const std::string& collection, const std::string& model_dir,
                                  const std::function<void(uint64_t, uint64_t)>& progress) {
  // 1. The target, checked here (the model loads, its dimension fits), and
  // recorded in the entry. (Entry reconciles first when the collection is
  // new to this node.)
  RETURN_IF_ERROR(Entry(collection).status());
  ASSIGN_OR_RETURN(ClusterMap::Versioned v, map_->GetVersioned(collection));
  ShardedCollection from = v.collection;
  ASSIGN_OR_RETURN(db::CollectionSpec target, db_->ReindexedSpec(collection, model_dir));
  if (!from.reindex_to.empty() && from.reindex_to != target.model_id) {
    return absl::FailedPreconditionError(absl::StrCat(
        "collection '", collection, "' is being reindexed to model ", from.reindex_to,
        " already: run that reindex again to finish it"));
  }
  if (from.reindex_to.empty()) {
    from.reindex_to = target.model_id;
    RETURN_IF_ERROR(map_->Update(from, v.revision));
  }
  ShardedCollection to = from;
  to.spec = target;
  to.model_id = target.model_id;
  to.generation = from.generation + 1;
  to.reindex_to.clear();
  spdlog::info("cluster reindex of '{}' onto {}: log {} -> {}", collection, to.model_id,
               from.log(), to.log());

  // 2. The new log's streams, as many JetStream replicas as the old ones.
  for (uint32_t s = 0; s < from.shards; ++s) {
    ShardStreamOptions so;
    ASSIGN_OR_RETURN(so.replicas, ShardStreamReplicas(*nats_, from.log(), s));
    RETURN_IF_ERROR(EnsureShardStream(*nats_, to.log(), s, so));
  }

  // 3. Copy rounds while writes go on; 4. the fence and the last round.
  std::vector<uint64_t> copied(from.shards, 0);
  uint64_t total = 0, done = 0;
  for (uint32_t s = 0; s < from.shards; ++s) {
    ASSIGN_OR_RETURN(uint64_t count, ShardMessageCount(*nats_, from.log(), s));
    total += count;
  }
  auto round = [&]() -> absl::StatusOr<uint64_t> {
    uint64_t n = 0;
    for (uint32_t s = 0; s < from.shards; ++s) {
      if (Stopping()) {
        return absl::CancelledError(absl::StrCat(
            "node ", options_.node_id, " is stopping: the reindex of '", collection,
            "' stops before its switch (run it again to resume)"));
      }
      ASSIGN_OR_RETURN(uint64_t last, ShardLastSequence(*nats_, from.log(), s));
      ShardCopier copier(db_, nats_, &writer_, from, to, s);
      ASSIGN_OR_RETURN(uint64_t k, copier.CopyTo(last, &copied[s]));
      n += k;
      done += k;
      if (progress) progress(std::min(done, total), total);
    }
    return n;
  };
  for (int r = 0; r < kCopyRounds; ++r) {
    ASSIGN_OR_RETURN(uint64_t n, round());
    if (n < kFewChanges) break;
  }
  for (uint32_t s = 0; s < from.shards; ++s) RETURN_IF_ERROR(SealShardStream(*nats_, from.log(), s));
  const absl::Time fenced = absl::Now();
  RETURN_IF_ERROR(round().status());

  // 5. The switch, if nobody changed the entry meanwhile.
  ASSIGN_OR_RETURN(ClusterMap::Versioned now, map_->GetVersioned(collection));
  if (now.collection.generation != from.generation || now.collection.reindex_to != to.model_id) {
    return absl::AbortedError(absl::StrCat("collection '", collection,
                                           "' changed in the map during the reindex"));
  }
  to.placement = now.collection.placement;  // a rebalance may have moved replicas
  RETURN_IF_ERROR(map_->Update(to, now.revision));
  spdlog::info("cluster reindex of '{}': switched to {} (writes paused {} ms)", collection,
               to.log(), absl::ToInt64Milliseconds(absl::Now() - fenced));
  if (progress) progress(total, total);
  RETURN_IF_ERROR(Reconcile());

  // 6. The old log goes once no live node reads it any more.
  const absl::Time until = absl::Now() + kRetireWait;
  const std::string old_prefix = absl::StrCat(from.log(), "/");
  while (absl::Now() < until) {
    bool reading = false;
    ASSIGN_OR_RETURN(auto live, map_->LiveNodeInfo());
    for (const auto& [id, raw] : live) {
      absl::StatusOr<NodeInfo> info = DecodeNodeInfo(raw);
      if (!info.ok()) continue;
      for (const auto& [key, position] : info->positions) {
        if (key.rfind(old_prefix, 0) == 0) reading = true;
      }
    }
    if (!reading) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
  }
  for (uint32_t s = 0; s < from.shards; ++s) {
    if (absl::Status st = DeleteShardStream(*nats_, from.log(), s); !st.ok()) {
      spdlog::warn("cluster reindex of '{}': the old log's stream {} stays: {}", collection,
                   ShardStreamName(from.log(), s), st.ToString());
    }
  }
  return absl::OkStatus();
}

absl::Status ClusterNode::StartReindex(const std::string& collection,
                                       const std::string& model_dir) {
  // The target's checks answer the caller (a bad model, a dimension).
  RETURN_IF_ERROR(Entry(collection).status());
  ASSIGN_OR_RETURN(const db::CollectionSpec target, db_->ReindexedSpec(collection, model_dir));
  std::lock_guard<std::mutex> lock(jobs_mu_);
  auto it = jobs_.find(collection);
  if (it != jobs_.end() && it->second.progress.state == engine::ReindexProgress::State::kRunning) {
    if (it->second.model_dir == model_dir) return absl::OkStatus();  // a retry joins it
    return absl::FailedPreconditionError(absl::StrCat(
        "collection '", collection, "' is already being reindexed (to another model)"));
  }
  ReindexJob& job = jobs_[collection];
  job = ReindexJob();
  job.model_dir = model_dir;
  job.progress.state = engine::ReindexProgress::State::kRunning;
  job.progress.model_id = target.model_id;
  job_threads_.emplace_back([this, collection, model_dir] {
    absl::Status s = Reindex(collection, model_dir, [&](uint64_t done, uint64_t total) {
      std::lock_guard<std::mutex> l(jobs_mu_);
      jobs_[collection].progress.done = done;
      jobs_[collection].progress.total = total;
    });
    if (!s.ok()) spdlog::error("cluster reindex of '{}' failed: {}", collection, s.ToString());
    absl::StatusOr<ShardedCollection> after = map_->Get(collection);
    std::lock_guard<std::mutex> l(jobs_mu_);
    engine::ReindexProgress& p = jobs_[collection].progress;
    p.state = s.ok() ? engine::ReindexProgress::State::kDone
                     : engine::ReindexProgress::State::kFailed;
    p.error = std::string(s.message());
    if (after.ok()) p.model_id = s.ok() ? after->model_id : after->reindex_to;
    p.committed = s.ok();
  });
  return absl::OkStatus();
}

absl::StatusOr<engine::ReindexProgress> ClusterNode::ReindexProgressOf(
    const std::string& collection) {
  {
    std::lock_guard<std::mutex> lock(jobs_mu_);
    if (auto it = jobs_.find(collection); it != jobs_.end()) return it->second.progress;
  }
  ASSIGN_OR_RETURN(ShardedCollection c, map_->Get(collection));
  engine::ReindexProgress p;
  if (!c.reindex_to.empty()) {  // another node's job (or one a crash ended: run it again)
    p.state = engine::ReindexProgress::State::kRunning;
    p.model_id = c.reindex_to;
  }
  return p;
}

}  // namespace neodb::cluster
