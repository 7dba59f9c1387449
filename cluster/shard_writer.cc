#include "cluster/shard_writer.h"

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

absl::Status CheckShards(uint32_t shards) {
  if (shards < 1 || shards > kMaxShards) {
    return absl::InvalidArgumentError(
        absl::StrCat("a collection has 1..", kMaxShards, " shards, not ", shards));
  }
  return absl::OkStatus();
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
  for (const auto& [shard, seq] : more) {
    uint64_t& best = (*token)[shard];
    best = std::max(best, seq);
  }
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

absl::Status ShardWriter::Publish(const std::string& collection, uint32_t shards,
                                  const ShardChange& change, absl::Time deadline,
                                  ConsistencyToken* token) {
  const uint32_t shard = ShardOf(change.doc_id(), shards);
  const std::string msg_id = absl::StrCat(node_id_, "-", epoch_, "-", next_.fetch_add(1));
  absl::Duration backoff = absl::Milliseconds(50);
  while (true) {
    absl::StatusOr<uint64_t> seq = PublishShardChange(*nats_, collection, shard, change, msg_id, deadline);
    if (seq.ok()) {
      uint64_t& best = (*token)[shard];
      best = std::max(best, *seq);
      return absl::OkStatus();
    }
    if (!absl::IsUnavailable(seq.status()) || absl::Now() + backoff >= deadline) {
      return seq.status();
    }
    std::this_thread::sleep_for(absl::ToChronoMilliseconds(backoff));
    backoff = std::min(backoff * 2, absl::Seconds(1));
  }
}

absl::StatusOr<ShardedWrite> ShardWriter::Upsert(const std::string& collection, uint32_t shards,
                                                 std::vector<engine::DocumentInput> docs,
                                                 absl::Time deadline) {
  RETURN_IF_ERROR(CheckShards(shards));
  ASSIGN_OR_RETURN(engine::Collection::PreparedWrite write,
                   db_->PrepareUpsert(collection, std::move(docs), deadline));
  ShardedWrite out;
  for (db::Document& d : write.documents) {
    ShardChange change;
    change.op = ShardChange::Op::kUpsert;
    change.document = std::move(d);
    RETURN_IF_ERROR(Publish(collection, shards, change, deadline, &out.token));
  }
  out.ids = std::move(write.ids);
  out.tokens = write.tokens;
  return out;
}

absl::StatusOr<ShardedWrite> ShardWriter::Delete(const std::string& collection, uint32_t shards,
                                                 const std::vector<std::string>& ids,
                                                 absl::Time deadline) {
  RETURN_IF_ERROR(CheckShards(shards));
  for (const std::string& id : ids) {
    if (id.empty() || id.size() > db::kMaxDocumentIdBytes) {
      return absl::InvalidArgumentError(absl::StrCat("document id of ", id.size(),
                                                     " bytes; ids have 1..",
                                                     db::kMaxDocumentIdBytes));
    }
  }
  ShardedWrite out;
  for (const std::string& id : ids) {
    ShardChange change;
    change.op = ShardChange::Op::kDelete;
    change.id = id;
    RETURN_IF_ERROR(Publish(collection, shards, change, deadline, &out.token));
  }
  out.ids = ids;
  return out;
}

}  // namespace neodb::cluster
