#include "cluster/shard_replica.h"

#include <vector>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "cluster/shard_change.h"
#include "cluster/shard_log.h"
#include "cluster/shard_map.h"
#include "common/status_macros.h"
#include "spdlog/spdlog.h"

namespace neodb::cluster {
namespace {

// Messages taken into one store batch at most.
constexpr size_t kMaxBatch = 512;
// How long a replica stays quiet before it asks whether the stream moved on.
constexpr absl::Duration kQuietCheck = absl::Seconds(2);

struct MsgDeleter {
  void operator()(natsMsg* m) const { natsMsg_Destroy(m); }
};
using MsgPtr = std::unique_ptr<natsMsg, MsgDeleter>;

struct Received {
  uint64_t sequence = 0;
  std::string msg_id;  // its de-duplication id (empty if it has none)
  ShardChange change;
};

std::string MsgId(natsMsg* msg) {
  const char* id = nullptr;
  if (natsMsgHeader_Get(msg, "Nats-Msg-Id", &id) != NATS_OK || id == nullptr) return "";
  return id;
}

// Stream sequence and pending count of a message from a JetStream consumer.
absl::Status ReadMeta(natsMsg* msg, uint64_t* sequence, uint64_t* pending) {
  jsMsgMetaData* meta = nullptr;
  natsStatus s = natsMsg_GetMetaData(&meta, msg);
  if (s != NATS_OK) return NatsStatus(s, static_cast<jsErrCode>(0), "reading a shard message's metadata");
  *sequence = meta->Sequence.Stream;
  *pending = meta->NumPending;
  jsMsgMetaData_Destroy(meta);
  return absl::OkStatus();
}

}  // namespace

ShardReplica::ShardReplica(engine::Database* db, const NatsClient* nats, std::string collection,
                           std::string log, uint32_t shard, uint32_t shards)
    : db_(db),
      nats_(nats),
      collection_(std::move(collection)),
      log_(std::move(log)),
      shard_(shard),
      shards_(shards),
      stream_(ShardStreamName(log_, shard_)) {}

ShardReplica::~ShardReplica() {
  Stop();
  std::lock_guard<std::mutex> lock(poll_mu_);
  Unsubscribe();
}

absl::Status ShardReplica::status() const {
  std::lock_guard<std::mutex> lock(mu_);
  return status_;
}

absl::Status ShardReplica::LoadPosition() {
  if (loaded_) return absl::OkStatus();
  ASSIGN_OR_RETURN(uint64_t p, db_->SourcePositionOf(collection_, stream_));
  position_.store(p);
  // A copy kept across a restart serves reads while it catches up (as it
  // did before the restart); a new one only once it has caught up.
  if (p > 0) ready_.store(true);
  loaded_ = true;
  return absl::OkStatus();
}

absl::Status ShardReplica::Subscribe() {
  if (sub_ != nullptr) return absl::OkStatus();
  jsSubOptions so;
  jsSubOptions_Init(&so);
  so.Stream = stream_.c_str();
  so.Ordered = true;
  const uint64_t from = position_.load() + 1;
  if (from > 1) {
    so.Config.DeliverPolicy = js_DeliverByStartSequence;
    so.Config.OptStartSeq = from;
  } else {
    so.Config.DeliverPolicy = js_DeliverAll;
  }
  const std::string subjects = ShardSubjects(log_, shard_);
  jsErrCode jerr = static_cast<jsErrCode>(0);
  natsStatus s = js_SubscribeSync(&sub_, nats_->jetstream(), subjects.c_str(), nullptr, &so, &jerr);
  if (s != NATS_OK) {
    sub_ = nullptr;
    return NatsStatus(s, jerr, absl::StrCat("subscribing to ", stream_, " from ", from));
  }
  return absl::OkStatus();
}

void ShardReplica::Unsubscribe() {
  if (sub_ == nullptr) return;
  natsSubscription_Unsubscribe(sub_);
  natsSubscription_Destroy(sub_);
  sub_ = nullptr;
}

absl::StatusOr<size_t> ShardReplica::Poll(absl::Duration wait) {
  std::lock_guard<std::mutex> lock(poll_mu_);
  absl::StatusOr<size_t> n = PollLocked(wait);
  {
    std::lock_guard<std::mutex> l(mu_);
    status_ = n.status();
  }
  if (!n.ok()) Unsubscribe();  // the next poll starts again from the position
  cv_.notify_all();
  return n;
}

absl::StatusOr<size_t> ShardReplica::PollLocked(absl::Duration wait) {
  RETURN_IF_ERROR(LoadPosition());
  RETURN_IF_ERROR(Subscribe());
  std::vector<Received> batch;
  bool caught_up = false;  // the batch's last change was the stream's last then
  int64_t wait_ms = std::max<int64_t>(1, absl::ToInt64Milliseconds(wait));
  const std::string prefix = absl::StrCat("neodb.", log_, ".", shard_, ".");
  while (batch.size() < kMaxBatch) {
    natsMsg* raw = nullptr;
    natsStatus s = natsSubscription_NextMsg(&raw, sub_, wait_ms);
    if (s == NATS_TIMEOUT) break;
    if (s != NATS_OK) return NatsStatus(s, static_cast<jsErrCode>(0), absl::StrCat("reading ", stream_));
    MsgPtr msg(raw);
    uint64_t sequence = 0, pending = 0;
    RETURN_IF_ERROR(ReadMeta(msg.get(), &sequence, &pending));
    // Applied already, or in this batch already: a consumer recreated after
    // a reconnect may deliver again what it delivered before. Positions only
    // grow, and so does the batch, so a change is never applied after a
    // later one.
    const uint64_t seen = batch.empty() ? position_.load() : batch.back().sequence;
    if (sequence <= seen) continue;
    const std::string_view data(natsMsg_GetData(msg.get()),
                                static_cast<size_t>(natsMsg_GetDataLength(msg.get())));
    absl::StatusOr<ShardChange> change = DecodeShardChange(data);
    if (!change.ok()) {
      return absl::DataLossError(absl::StrCat(stream_, " message ", sequence, ": ",
                                              change.status().message()));
    }
    // The subject names the document: compaction keeps one message per
    // subject, so a change filed under another document's subject would
    // replace that document's last change. Such a message is refused.
    const std::string subject = natsMsg_GetSubject(msg.get());
    if (subject != prefix + absl::BytesToHexString(change->doc_id())) {
      return absl::DataLossError(absl::StrCat(stream_, " message ", sequence, " (subject ",
                                              subject, ") carries document '",
                                              change->doc_id(), "' of another subject"));
    }
    batch.push_back(Received{sequence, MsgId(msg.get()), *std::move(change)});
    caught_up = pending == 0;
    if (pending == 0) break;  // caught up: apply now
    wait_ms = 1000;           // more are on their way
  }
  if (batch.empty()) {
    // Watchdog: an ordered consumer is recreated by the client when its
    // heartbeats stop, but across server restarts in a cluster one has been
    // seen to stay silent with changes waiting. Quiet for a while and behind
    // the stream: subscribe again from the position.
    const absl::Time now = absl::Now();
    if (quiet_since_ == absl::InfiniteFuture()) quiet_since_ = now;
    if (now - quiet_since_ >= kQuietCheck) {
      quiet_since_ = now;
      ASSIGN_OR_RETURN(uint64_t last, ShardLastSequence(*nats_, log_, shard_));
      ASSIGN_OR_RETURN(bool diverged, DivergedLocked(last));
      if (diverged) {
        RETURN_IF_ERROR(ResyncLocked());
        return 0;
      }
      if (last <= position_.load()) ready_.store(true);  // an empty stream, or all applied
      if (last > position_.load()) {
        spdlog::info("replica of {}: quiet at {} while the stream is at {}; subscribing again",
                     stream_, position_.load(), last);
        Unsubscribe();
      }
    }
    return 0;
  }
  quiet_since_ = absl::InfiniteFuture();
  // Runs of one kind, in stream order, each one store batch with its last
  // change's sequence as the position.
  size_t applied = 0;
  for (size_t i = 0; i < batch.size();) {
    const ShardChange::Op op = batch[i].change.op;
    size_t j = i;
    while (j < batch.size() && batch[j].change.op == op) ++j;
    const db::SourcePosition from{stream_, batch[j - 1].sequence};
    if (op == ShardChange::Op::kUpsert) {
      std::vector<db::Document> docs;
      for (size_t k = i; k < j; ++k) docs.push_back(std::move(batch[k].change.document));
      RETURN_IF_ERROR(db_->ApplyReplicatedUpserts(collection_, std::move(docs), from));
    } else {
      std::vector<std::string> ids;
      for (size_t k = i; k < j; ++k) ids.push_back(std::move(batch[k].change.id));
      RETURN_IF_ERROR(db_->ApplyReplicatedDeletes(collection_, ids, from));
    }
    position_.store(from.position);
    tip_id_ = batch[j - 1].msg_id;
    applied_.fetch_add(j - i);
    applied += j - i;
    i = j;
  }
  if (caught_up) ready_.store(true);
  return applied;
}

absl::StatusOr<bool> ShardReplica::DivergedLocked(uint64_t last) {
  const uint64_t position = position_.load();
  if (position == 0) return false;
  if (last < position) {
    spdlog::warn("replica of {}: applied up to {}, but the stream ends at {}: it lost changes "
                 "it had delivered",
                 stream_, position, last);
    return true;
  }
  if (tip_id_.empty()) return false;
  natsMsg* raw = nullptr;
  jsErrCode jerr = static_cast<jsErrCode>(0);
  natsStatus s = js_GetMsg(&raw, nats_->jetstream(), stream_.c_str(), position, nullptr, &jerr);
  if (s == NATS_NOT_FOUND || (s != NATS_OK && jerr == JSNoMessageFoundErr)) {
    return false;  // compacted: a later change of the same document replaced it
  }
  if (s != NATS_OK) return NatsStatus(s, jerr, absl::StrCat("reading ", stream_, " at ", position));
  MsgPtr msg(raw);
  const std::string id = MsgId(msg.get());
  if (id == tip_id_) return false;
  spdlog::warn("replica of {}: the change it applied at {} was '{}', the stream now holds '{}' "
               "there",
               stream_, position, tip_id_, id);
  return true;
}

absl::Status ShardReplica::DeleteCopyLocked(size_t* deleted) {
  // This node's copy of the shard: the collection's documents of this shard.
  std::vector<std::string> ids;
  std::string token;
  do {
    ASSIGN_OR_RETURN(db::ListResult page, db_->List(collection_, token, 1000));
    for (const db::Document& d : page.documents) {
      if (ShardOf(d.id, shards_) == shard_) ids.push_back(d.id);
    }
    token = page.next_page_token;
  } while (!token.empty());
  // One store batch: the deletes and position 0 together, so a crash leaves
  // either the old copy at its old position or none at 0.
  RETURN_IF_ERROR(db_->ApplyReplicatedDeletes(collection_, ids, {stream_, 0}));
  Unsubscribe();
  position_.store(0);
  tip_id_.clear();
  *deleted = ids.size();
  return absl::OkStatus();
}

absl::Status ShardReplica::ResyncLocked() {
  size_t deleted = 0;
  RETURN_IF_ERROR(DeleteCopyLocked(&deleted));
  ready_.store(false);  // its copy is gone until it has read the stream again
  resyncs_.fetch_add(1);
  spdlog::warn("replica of {}: deleted its {} documents; reading the stream again from its start",
               stream_, deleted);
  return absl::OkStatus();
}

absl::Status ShardReplica::DropCopy() {
  Stop();
  std::lock_guard<std::mutex> lock(poll_mu_);
  size_t deleted = 0;
  RETURN_IF_ERROR(DeleteCopyLocked(&deleted));
  spdlog::info("replica of {}: placed elsewhere; deleted this node's {} documents", stream_,
               deleted);
  return absl::OkStatus();
}

absl::Status ShardReplica::WaitFor(uint64_t sequence, absl::Duration timeout) {
  const absl::Time deadline = absl::Now() + timeout;
  while (true) {
    {
      std::unique_lock<std::mutex> lock(mu_);
      if (loaded_ && position_.load() >= sequence) return absl::OkStatus();
      if (loop_.running()) {
        // The background thread polls; wait for it to move.
        const absl::Duration left = deadline - absl::Now();
        if (left <= absl::ZeroDuration()) break;
        cv_.wait_for(lock, absl::ToChronoMilliseconds(std::min(left, absl::Milliseconds(100))));
        continue;
      }
    }
    const absl::Duration left = deadline - absl::Now();
    if (left <= absl::ZeroDuration()) break;
    absl::StatusOr<size_t> n = Poll(std::min(left, absl::Milliseconds(200)));
    if (!n.ok() && absl::Now() >= deadline) return n.status();
  }
  absl::Status why = status();
  return absl::DeadlineExceededError(
      absl::StrCat("replica of ", stream_, " is at ", position_.load(), ", not yet at ", sequence,
                   why.ok() ? "" : absl::StrCat(" (", why.message(), ")")));
}

absl::Status ShardReplica::CatchUp(absl::Duration timeout) {
  ASSIGN_OR_RETURN(uint64_t last, ShardLastSequence(*nats_, log_, shard_));
  {
    std::lock_guard<std::mutex> lock(poll_mu_);
    RETURN_IF_ERROR(LoadPosition());
    ASSIGN_OR_RETURN(bool diverged, DivergedLocked(last));
    if (diverged) RETURN_IF_ERROR(ResyncLocked());
  }
  return WaitFor(last, timeout);
}

void ShardReplica::Start() {
  loop_.Start([this] { Run(); });
}

void ShardReplica::Stop() {
  loop_.Stop();
  cv_.notify_all();  // a WaitFor polls for itself from now on
}

void ShardReplica::Run() {
  absl::Duration backoff = absl::Milliseconds(50);
  while (!loop_.stopping()) {
    absl::StatusOr<size_t> n = Poll(absl::Milliseconds(250));
    if (n.ok()) {
      backoff = absl::Milliseconds(50);
      continue;
    }
    spdlog::warn("replica of {}: {} (retrying from {})", stream_, n.status().ToString(),
                 position_.load());
    loop_.SleepFor(backoff);
    backoff = std::min(backoff * 2, absl::Seconds(2));
  }
}

}  // namespace neodb::cluster
