#include "cluster/shard_writer.h"

#include <map>
#include <mutex>
#include <random>
#include <thread>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "cluster/shard_change.h"
#include "cluster/shard_log.h"
#include "cluster/shard_map.h"
#include "common/status_macros.h"
#include "db/document.h"

namespace neodb::cluster {
namespace {

std::string RandomEpoch() {
  std::random_device rd;
  return absl::StrCat(absl::Hex(static_cast<uint64_t>(rd()) << 32 | rd(), absl::kZeroPad16));
}

// `token` reaches at least `sequence` in `shard`.
void Raise(uint32_t shard, uint64_t sequence, ConsistencyToken* token) {
  uint64_t& best = (*token)[shard];
  best = std::max(best, sequence);
}

}  // namespace

std::string FormatToken(const ConsistencyToken& token) {
  std::string out;
  for (const auto& [shard, seq] : token) {
    absl::StrAppend(&out, out.empty() ? "" : ",", shard, ":", seq);
  }
  return out;
}

void MergeToken(const ConsistencyToken& more, ConsistencyToken* token) {
  for (const auto& [shard, seq] : more) Raise(shard, seq, token);
}

absl::StatusOr<ConsistencyToken> ParseToken(const std::string& text) {
  ConsistencyToken token;
  if (text.empty()) return token;
  for (absl::string_view part : absl::StrSplit(text, ',')) {
    std::pair<absl::string_view, absl::string_view> kv = absl::StrSplit(part, ':');
    uint32_t shard = 0;
    uint64_t seq = 0;
    if (!absl::SimpleAtoi(kv.first, &shard) || !absl::SimpleAtoi(kv.second, &seq) ||
        shard >= kMaxShards || token.count(shard)) {
      return absl::InvalidArgumentError(
          absl::StrCat("consistency token '", text, "' is not shard:sequence,..."));
    }
    token[shard] = seq;
  }
  return token;
}

ShardWriter::ShardWriter(engine::Database* db, const NatsClient* nats, std::string node_id)
    : db_(db), nats_(nats), node_id_(std::move(node_id)), epoch_(RandomEpoch()) {}

absl::Status ShardWriter::Publish(const std::string& log, uint32_t shards,
                                  const ShardChange& change, const std::string& msg_id,
                                  absl::Time deadline, ConsistencyToken* token,
                                  const std::function<bool()>& current) {
  const uint32_t shard = ShardOf(change.doc_id(), shards);
  absl::Duration backoff = absl::Milliseconds(50);
  while (true) {
    absl::StatusOr<uint64_t> seq =
        PublishShardChange(*nats_, log, shard, change, msg_id, deadline);
    if (seq.ok()) {
      Raise(shard, *seq, token);
      return absl::OkStatus();
    }
    if (!absl::IsUnavailable(seq.status()) || absl::Now() + backoff >= deadline) {
      return seq.status();
    }
    if (current && !current()) {
      // Still UNAVAILABLE: an earlier attempt may have been stored (and
      // copied to the new log); a retry settles it.
      return absl::UnavailableError(absl::StrCat(
          "log ", log, " is no longer the collection's (a cluster reindex switched it): ",
          seq.status().message(), "; retry"));
    }
    std::this_thread::sleep_for(absl::ToChronoMilliseconds(backoff));
    backoff = std::min(backoff * 2, absl::Seconds(1));
  }
}

namespace {

// What the asynchronous acks of one request say, by publish id.
struct AsyncAcks {
  std::mutex mu;
  std::map<std::string, uint64_t> sequence;  // acknowledged ones
};

void OnAck(jsCtx*, natsMsg* msg, jsPubAck* pa, jsPubAckErr*, void* closure) {
  auto* acks = static_cast<AsyncAcks*>(closure);
  const char* id = nullptr;
  if (pa != nullptr && natsMsgHeader_Get(msg, "Nats-Msg-Id", &id) == NATS_OK && id != nullptr) {
    std::lock_guard<std::mutex> lock(acks->mu);
    acks->sequence[id] = pa->Sequence;
  }
  natsMsg_Destroy(msg);  // failures are published again, one by one, afterwards
}

}  // namespace

absl::Status ShardWriter::PublishAll(const std::string& log, uint32_t shards,
                                     const std::vector<ShardChange>& all, absl::Time deadline,
                                     ConsistencyToken* token,
                                     const std::function<bool()>& current) {
  // One change per id, its last: published together, two changes of one id
  // could be stored in either order.
  std::map<std::string, size_t> last;
  for (size_t i = 0; i < all.size(); ++i) last[all[i].doc_id()] = i;
  std::vector<ShardChange> changes;
  std::vector<std::string> ids;
  for (size_t i = 0; i < all.size(); ++i) {
    if (last[all[i].doc_id()] != i) continue;
    changes.push_back(all[i]);
    ids.push_back(absl::StrCat(node_id_, "-", epoch_, "-", next_.fetch_add(1)));
  }
  return PublishWithIds(log, shards, changes, ids, deadline, token, current);
}

absl::Status ShardWriter::PublishWithIds(const std::string& log, uint32_t shards,
                                         const std::vector<ShardChange>& changes,
                                         const std::vector<std::string>& ids, absl::Time deadline,
                                         ConsistencyToken* token,
                                         const std::function<bool()>& current) {
  if (ids.size() != changes.size()) {
    return absl::InternalError("PublishWithIds: one publish id per change");
  }
  auto record = std::make_shared<AsyncAcks>();
  AsyncAcks& acks = *record;
  if (changes.size() > 1) {
    // A context of this request's own, so that its acks and its wait are
    // this request's alone.
    jsOptions jo;
    jsOptions_Init(&jo);
    jo.Wait = absl::ToInt64Milliseconds(nats_->options().publish_attempt);
    jo.PublishAsync.AckHandler = OnAck;
    jo.PublishAsync.AckHandlerClosure = &acks;
    jo.PublishAsync.MaxPending = 4096;
    jsCtx* js = nullptr;
    if (natsConnection_JetStream(&js, nats_->connection(), &jo) == NATS_OK) {
      for (size_t i = 0; i < changes.size(); ++i) {
        const uint32_t shard = ShardOf(changes[i].doc_id(), shards);
        const std::string subject = DocumentSubject(log, shard, changes[i].doc_id());
        const std::string payload = EncodeShardChange(changes[i]);
        natsMsg* m = nullptr;
        if (natsMsg_Create(&m, subject.c_str(), nullptr, payload.data(),
                           static_cast<int>(payload.size())) != NATS_OK) {
          break;
        }
        jsPubOptions po;
        jsPubOptions_Init(&po);
        po.MsgId = ids[i].c_str();
        if (js_PublishMsgAsync(js, &m, &po) != NATS_OK) {
          natsMsg_Destroy(m);
          break;  // the rest go one by one below
        }
      }
      jsPubOptions wait;
      jsPubOptions_Init(&wait);
      wait.MaxWait = std::max<int64_t>(
          1, std::min(absl::ToInt64Milliseconds(deadline - absl::Now()),
                      absl::ToInt64Milliseconds(nats_->options().publish_attempt)));
      js_PublishAsyncComplete(js, &wait);  // a timeout leaves the rest to the retries
      jsCtx_Destroy(js);
    }
    std::lock_guard<std::mutex> lock(retired_mu_);
    const absl::Time now = absl::Now();
    while (!retired_.empty() && now - retired_.front().first > absl::Seconds(30)) {
      retired_.pop_front();
    }
    retired_.emplace_back(now, record);
  }
  std::map<std::string, uint64_t> acked;
  {
    std::lock_guard<std::mutex> lock(acks.mu);
    acked = acks.sequence;
  }
  for (size_t i = 0; i < changes.size(); ++i) {
    if (auto it = acked.find(ids[i]); it != acked.end()) {
      Raise(ShardOf(changes[i].doc_id(), shards), it->second, token);
      continue;
    }
    RETURN_IF_ERROR(Publish(log, shards, changes[i], ids[i], deadline, token, current));
  }
  return absl::OkStatus();
}

absl::StatusOr<ShardedWrite> ShardWriter::Upsert(const ShardedCollection& c,
                                                 std::vector<engine::DocumentInput> docs,
                                                 absl::Time deadline,
                                                 const std::function<bool()>& current) {
  RETURN_IF_ERROR(CheckShardCount(c.shards));
  ASSIGN_OR_RETURN(engine::Collection::PreparedWrite write,
                   db_->PrepareUpsert(c.spec.name, std::move(docs), deadline));
  // The vectors must be of the model of the log they go to: across a
  // cluster reindex's switch this node's collection and its view of the map
  // move one after the other.
  for (const db::Document& d : write.documents) {
    if (d.model_id != c.model_id) {
      return absl::UnavailableError(absl::StrCat(
          "collection '", c.spec.name, "' is switching to model ", c.model_id,
          " (a cluster reindex); this node still embeds with ", d.model_id, ": retry"));
    }
  }
  ShardedWrite out;
  std::vector<ShardChange> changes;
  for (db::Document& d : write.documents) {
    ShardChange change;
    change.op = ShardChange::Op::kUpsert;
    change.document = std::move(d);
    changes.push_back(std::move(change));
  }
  RETURN_IF_ERROR(PublishAll(c.log(), c.shards, changes, deadline, &out.token, current));
  out.ids = std::move(write.ids);
  out.tokens = write.tokens;
  return out;
}

absl::StatusOr<ShardedWrite> ShardWriter::Delete(const ShardedCollection& c,
                                                 const std::vector<std::string>& ids,
                                                 absl::Time deadline,
                                                 const std::function<bool()>& current) {
  RETURN_IF_ERROR(CheckShardCount(c.shards));
  for (const std::string& id : ids) {
    if (id.empty() || id.size() > db::kMaxDocumentIdBytes) {
      return absl::InvalidArgumentError(absl::StrCat("document id of ", id.size(),
                                                     " bytes; ids have 1..",
                                                     db::kMaxDocumentIdBytes));
    }
  }
  ShardedWrite out;
  std::vector<ShardChange> changes;
  for (const std::string& id : ids) {
    ShardChange change;
    change.op = ShardChange::Op::kDelete;
    change.id = id;
    changes.push_back(std::move(change));
  }
  RETURN_IF_ERROR(PublishAll(c.log(), c.shards, changes, deadline, &out.token, current));
  out.ids = ids;
  return out;
}

}  // namespace neodb::cluster
