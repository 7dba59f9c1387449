#include "cluster/shard_log.h"

#include <algorithm>
#include <memory>

#include "absl/strings/str_cat.h"
#include "cluster/shard_map.h"

namespace neodb::cluster {
namespace {

struct StreamInfoDeleter {
  void operator()(jsStreamInfo* si) const { jsStreamInfo_Destroy(si); }
};
using StreamInfoPtr = std::unique_ptr<jsStreamInfo, StreamInfoDeleter>;

absl::StatusOr<StreamInfoPtr> GetStreamInfo(const NatsClient& nats, const std::string& stream) {
  jsStreamInfo* si = nullptr;
  jsErrCode jerr = static_cast<jsErrCode>(0);
  natsStatus s = js_GetStreamInfo(&si, nats.jetstream(), stream.c_str(), nullptr, &jerr);
  if (s != NATS_OK) return NatsStatus(s, jerr, absl::StrCat("reading stream ", stream));
  return StreamInfoPtr(si);
}

// Why `si`'s stream cannot serve as the shard's log; empty when it can.
std::string Mismatch(const jsStreamInfo& si, const std::string& subjects, int replicas) {
  const jsStreamConfig& c = *si.Config;
  if (c.SubjectsLen != 1 || subjects != c.Subjects[0]) {
    return absl::StrCat("it has other subjects than ", subjects);
  }
  if (c.MaxMsgsPerSubject != 1) {
    return absl::StrCat("it keeps ", c.MaxMsgsPerSubject, " messages per subject, not 1");
  }
  if (c.Retention != js_LimitsPolicy) return "its retention is not 'limits'";
  if (c.Replicas != replicas) {
    return absl::StrCat("it has ", c.Replicas, " replicas, not ", replicas);
  }
  return "";
}

// OK when stream `name` (`si`) can be the shard's log, else FAILED_PRECONDITION saying why.
absl::Status CheckFits(const jsStreamInfo& si, const std::string& name,
                       const std::string& subjects, int replicas) {
  const std::string why = Mismatch(si, subjects, replicas);
  if (why.empty()) return absl::OkStatus();
  return absl::FailedPreconditionError(
      absl::StrCat("stream ", name, " exists but cannot be the shard's log: ", why));
}

}  // namespace

absl::Status EnsureShardStream(const NatsClient& nats, const std::string& collection,
                               uint32_t shard, const ShardStreamOptions& options) {
  if (options.replicas < 1 || options.replicas > 5) {
    return absl::InvalidArgumentError(
        absl::StrCat("a shard's stream has 1..5 replicas, not ", options.replicas));
  }
  const std::string name = ShardStreamName(collection, shard);
  const std::string subjects = ShardSubjects(collection, shard);
  const char* subject_list[] = {subjects.c_str()};
  jsStreamConfig cfg;
  jsStreamConfig_Init(&cfg);
  cfg.Name = name.c_str();
  cfg.Subjects = subject_list;
  cfg.SubjectsLen = 1;
  cfg.Retention = js_LimitsPolicy;
  cfg.MaxMsgsPerSubject = 1;  // the compaction: each document's last change
  cfg.Storage = js_FileStorage;
  cfg.Replicas = options.replicas;
  cfg.Duplicates = absl::ToInt64Nanoseconds(options.duplicate_window);
  cfg.Discard = js_DiscardOld;
  jsStreamInfo* si = nullptr;
  jsErrCode jerr = static_cast<jsErrCode>(0);
  natsStatus s = js_AddStream(&si, nats.jetstream(), &cfg, nullptr, &jerr);
  if (s == NATS_OK) {
    StreamInfoPtr owned(si);
    return CheckFits(*si, name, subjects, options.replicas);
  }
  if (jerr != JSStreamNameExistErr) {
    return NatsStatus(s, jerr, absl::StrCat("creating stream ", name));
  }
  // It exists with another configuration than ours (an identical one is OK above).
  absl::StatusOr<StreamInfoPtr> existing = GetStreamInfo(nats, name);
  if (!existing.ok()) return existing.status();
  return CheckFits(**existing, name, subjects, options.replicas);
}

absl::Status DeleteShardStream(const NatsClient& nats, const std::string& collection,
                               uint32_t shard) {
  const std::string name = ShardStreamName(collection, shard);
  jsErrCode jerr = static_cast<jsErrCode>(0);
  natsStatus s = js_DeleteStream(nats.jetstream(), name.c_str(), nullptr, &jerr);
  return NatsStatus(s, jerr, absl::StrCat("deleting stream ", name));
}

absl::Status SealShardStream(const NatsClient& nats, const std::string& log, uint32_t shard) {
  const std::string name = ShardStreamName(log, shard);
  absl::StatusOr<StreamInfoPtr> si = GetStreamInfo(nats, name);
  if (!si.ok()) return si.status();
  if ((*si)->Config->Sealed) return absl::OkStatus();
  jsStreamConfig cfg = *(*si)->Config;  // the stream's own, with Sealed set
  cfg.Sealed = true;
  jsStreamInfo* out = nullptr;
  jsErrCode jerr = static_cast<jsErrCode>(0);
  natsStatus s = js_UpdateStream(&out, nats.jetstream(), &cfg, nullptr, &jerr);
  if (s != NATS_OK) return NatsStatus(s, jerr, absl::StrCat("sealing stream ", name));
  jsStreamInfo_Destroy(out);
  return absl::OkStatus();
}

absl::StatusOr<int> ShardStreamReplicas(const NatsClient& nats, const std::string& log,
                                        uint32_t shard) {
  absl::StatusOr<StreamInfoPtr> si = GetStreamInfo(nats, ShardStreamName(log, shard));
  if (!si.ok()) return si.status();
  return static_cast<int>((*si)->Config->Replicas);
}

absl::StatusOr<uint64_t> ShardLastSequence(const NatsClient& nats, const std::string& collection,
                                           uint32_t shard) {
  absl::StatusOr<StreamInfoPtr> si = GetStreamInfo(nats, ShardStreamName(collection, shard));
  if (!si.ok()) return si.status();
  return (*si)->State.LastSeq;
}

absl::StatusOr<uint64_t> ShardMessageCount(const NatsClient& nats, const std::string& collection,
                                           uint32_t shard) {
  absl::StatusOr<StreamInfoPtr> si = GetStreamInfo(nats, ShardStreamName(collection, shard));
  if (!si.ok()) return si.status();
  return (*si)->State.Msgs;
}

absl::StatusOr<uint64_t> PublishShardChange(const NatsClient& nats, const std::string& collection,
                                            uint32_t shard, const ShardChange& change,
                                            const std::string& msg_id, absl::Time deadline) {
  if (msg_id.empty() || msg_id.size() > 128) {
    return absl::InvalidArgumentError("a publish id has 1..128 bytes");
  }
  const std::string subject = DocumentSubject(collection, shard, change.doc_id());
  const std::string payload = EncodeShardChange(change);
  jsPubOptions po;
  jsPubOptions_Init(&po);
  po.MsgId = msg_id.c_str();
  const absl::Duration left =
      std::clamp(deadline - absl::Now(), absl::Milliseconds(1), nats.options().publish_attempt);
  po.MaxWait = absl::ToInt64Milliseconds(left);
  jsPubAck* ack = nullptr;
  jsErrCode jerr = static_cast<jsErrCode>(0);
  natsStatus s = js_Publish(&ack, nats.jetstream(), subject.c_str(), payload.data(),
                            static_cast<int>(payload.size()), &po, &jerr);
  if (s != NATS_OK) {
    return NatsStatus(s, jerr,
                      absl::StrCat("publishing document '", change.doc_id(), "' to shard ", shard,
                                   " of '", collection, "'"));
  }
  const uint64_t seq = ack->Sequence;
  jsPubAck_Destroy(ack);
  return seq;
}

}  // namespace neodb::cluster
