#include "cluster/collection_backup.h"

#include <unistd.h>

#include <memory>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "cluster/shard_log.h"
#include "cluster/shard_map.h"
#include "common/atomic_dir.h"
#include "common/atomic_file.h"
#include "common/status_macros.h"
#include "nlohmann/json.hpp"
#include "xxhash.h"

namespace neodb::cluster {
namespace {

constexpr int kFormat = 1;
constexpr uint32_t kMaxRecord = 64u << 20;  // far above any change a writer makes
constexpr absl::Duration kReadWait = absl::Seconds(10);

struct SubDeleter {
  void operator()(natsSubscription* s) const {
    natsSubscription_Unsubscribe(s);
    natsSubscription_Destroy(s);
  }
};
struct MsgDeleter {
  void operator()(natsMsg* m) const { natsMsg_Destroy(m); }
};

void PutLength(std::string* out, uint32_t n) {
  for (int i = 0; i < 4; ++i) out->push_back(static_cast<char>((n >> (8 * i)) & 0xff));
}

// Writes shard `s` of `c` to `path`; fills `out`.
absl::Status BackupShard(Env* env, const NatsClient& nats, const ShardedCollection& c, uint32_t s,
                         const std::string& path, CollectionBackup::Shard* out) {
  ASSIGN_OR_RETURN(AtomicFileWriter file, AtomicFileWriter::Create(env, path));
  XXH64_state_t* hash = XXH64_createState();
  std::unique_ptr<XXH64_state_t, decltype(&XXH64_freeState)> owned(hash, XXH64_freeState);
  XXH64_reset(hash, 0);
  auto append = [&](std::string_view data) -> absl::Status {
    XXH64_update(hash, data.data(), data.size());
    out->bytes += data.size();
    return file.Append(data);
  };
  ASSIGN_OR_RETURN(const uint64_t messages, ShardMessageCount(nats, c.log(), s));
  if (messages > 0) {
    const std::string stream = ShardStreamName(c.log(), s);
    jsSubOptions so;
    jsSubOptions_Init(&so);
    so.Stream = stream.c_str();
    so.Ordered = true;
    so.Config.DeliverPolicy = js_DeliverAll;
    const std::string subjects = ShardSubjects(c.log(), s);
    natsSubscription* raw = nullptr;
    jsErrCode jerr = static_cast<jsErrCode>(0);
    natsStatus st = js_SubscribeSync(&raw, nats.jetstream(), subjects.c_str(), nullptr, &so, &jerr);
    if (st != NATS_OK) return NatsStatus(st, jerr, absl::StrCat("reading ", stream));
    std::unique_ptr<natsSubscription, SubDeleter> sub(raw);
    // To the end of the stream as it stands when each message comes: the
    // last one says nothing is pending.
    while (true) {
      natsMsg* m = nullptr;
      st = natsSubscription_NextMsg(&m, sub.get(), absl::ToInt64Milliseconds(kReadWait));
      if (st != NATS_OK) {
        return NatsStatus(st, static_cast<jsErrCode>(0), absl::StrCat("reading ", stream));
      }
      std::unique_ptr<natsMsg, MsgDeleter> msg(m);
      jsMsgMetaData* meta = nullptr;
      if (natsMsg_GetMetaData(&meta, msg.get()) != NATS_OK) {
        return absl::InternalError(absl::StrCat(stream, ": a message without its metadata"));
      }
      const uint64_t seq = meta->Sequence.Stream, pending = meta->NumPending;
      jsMsgMetaData_Destroy(meta);
      const std::string_view data(natsMsg_GetData(msg.get()),
                                  static_cast<size_t>(natsMsg_GetDataLength(msg.get())));
      // Checked now, not at restore: a backup of a log nothing can replay is no backup.
      RETURN_IF_ERROR(DecodeShardChange(data).status());
      std::string length;
      PutLength(&length, static_cast<uint32_t>(data.size()));
      RETURN_IF_ERROR(append(length));
      RETURN_IF_ERROR(append(data));
      ++out->changes;
      out->last_sequence = seq;
      if (pending == 0) break;
    }
  }
  out->xxh64 = XXH64_digest(hash);
  return file.Commit();
}

std::string ShardFile(uint32_t s) { return absl::StrCat("shard-", s, ".log"); }

}  // namespace

uint64_t CollectionBackup::changes() const {
  uint64_t n = 0;
  for (const Shard& s : shards) n += s.changes;
  return n;
}

ConsistencyToken CollectionBackup::token() const {
  ConsistencyToken t;
  for (const Shard& s : shards) {
    if (s.last_sequence > 0) t[s.shard] = s.last_sequence;
  }
  return t;
}

absl::StatusOr<CollectionBackup> BackupCollection(Env* env, const NatsClient& nats,
                                                  const ShardedCollection& c,
                                                  const std::string& dir) {
  if (FileExists(env, dir)) {
    return absl::AlreadyExistsError(absl::StrCat("backup directory ", dir, " exists"));
  }
  const std::string staged = absl::StrCat(dir, ".tmp.", getpid());
  RETURN_IF_ERROR(env->DeleteTree(staged));
  RETURN_IF_ERROR(env->CreateDir(staged));
  CollectionBackup b;
  b.entry = c;
  absl::Status s = [&]() -> absl::Status {
    nlohmann::json shards = nlohmann::json::array();
    for (uint32_t i = 0; i < c.shards; ++i) {
      CollectionBackup::Shard sh;
      sh.shard = i;
      sh.file = ShardFile(i);
      RETURN_IF_ERROR(BackupShard(env, nats, c, i, absl::StrCat(staged, "/", sh.file), &sh));
      shards.push_back({{"shard", sh.shard},
                        {"file", sh.file},
                        {"changes", sh.changes},
                        {"bytes", sh.bytes},
                        {"xxh64", sh.xxh64},
                        {"last_sequence", sh.last_sequence}});
      b.shards.push_back(std::move(sh));
    }
    nlohmann::json manifest;
    manifest["format"] = kFormat;
    manifest["entry"] = absl::Base64Escape(EncodeShardedCollection(c));
    manifest["shards"] = shards;
    RETURN_IF_ERROR(WriteFileAtomically(env, absl::StrCat(staged, "/manifest.json"),
                                        {manifest.dump(2)}));
    return InstallDirectory(env, staged, dir);
  }();
  if (!s.ok()) {
    (void)env->DeleteTree(staged);
    return s;
  }
  return b;
}

absl::StatusOr<CollectionBackup> ReadCollectionBackup(Env* env, const std::string& dir) {
  auto bad = [&](const std::string& why) {
    return absl::InvalidArgumentError(absl::StrCat("backup ", dir, ": ", why));
  };
  ASSIGN_OR_RETURN(std::string text, ReadFileToString(env, absl::StrCat(dir, "/manifest.json")));
  nlohmann::json m = nlohmann::json::parse(text, nullptr, false);
  if (m.is_discarded() || !m.is_object()) return bad("manifest.json is not a JSON object");
  if (!m.contains("format") || m["format"] != kFormat) {
    return bad(absl::StrCat("manifest.json is not of format ", kFormat));
  }
  if (!m.contains("entry") || !m["entry"].is_string() || !m.contains("shards") ||
      !m["shards"].is_array()) {
    return bad("manifest.json lacks entry or shards");
  }
  std::string entry;
  if (!absl::Base64Unescape(m["entry"].get<std::string>(), &entry)) return bad("entry is not base64");
  CollectionBackup b;
  ASSIGN_OR_RETURN(b.entry, DecodeShardedCollection(entry));
  if (m["shards"].size() != b.entry.shards) return bad("the manifest does not list every shard");
  for (const nlohmann::json& j : m["shards"]) {
    CollectionBackup::Shard sh;
    for (const char* k : {"shard", "changes", "bytes", "xxh64", "last_sequence"}) {
      if (!j.contains(k) || !j[k].is_number_unsigned()) return bad(absl::StrCat("a shard's ", k));
    }
    sh.shard = j["shard"].get<uint32_t>();
    sh.changes = j["changes"].get<uint64_t>();
    sh.bytes = j["bytes"].get<uint64_t>();
    sh.xxh64 = j["xxh64"].get<uint64_t>();
    sh.last_sequence = j["last_sequence"].get<uint64_t>();
    sh.file = ShardFile(sh.shard);  // never a path the manifest names
    if (sh.shard != b.shards.size()) return bad("the shards are not listed 0, 1, ... in order");
    const std::string path = absl::StrCat(dir, "/", sh.file);
    ASSIGN_OR_RETURN(uint64_t size, env->GetFileSize(path));
    if (size != sh.bytes) {
      return absl::DataLossError(absl::StrCat("backup ", dir, ": ", sh.file, " has ", size,
                                              " bytes, the manifest says ", sh.bytes));
    }
    b.shards.push_back(std::move(sh));
  }
  return b;
}

absl::Status ForEachBackedUpChange(Env* env, const std::string& dir,
                                   const CollectionBackup::Shard& shard,
                                   const std::function<absl::Status(ShardChange)>& fn) {
  const std::string path = absl::StrCat(dir, "/", shard.file);
  ASSIGN_OR_RETURN(std::unique_ptr<SequentialFile> file, env->NewSequentialFile(path));
  XXH64_state_t* hash = XXH64_createState();
  std::unique_ptr<XXH64_state_t, decltype(&XXH64_freeState)> owned(hash, XXH64_freeState);
  XXH64_reset(hash, 0);
  auto read = [&](size_t n, std::string* out) -> absl::StatusOr<bool> {
    out->resize(n);
    size_t got = 0;
    while (got < n) {
      ASSIGN_OR_RETURN(size_t k, file->Read(n - got, out->data() + got));
      if (k == 0) break;
      got += k;
    }
    if (got == 0 && n > 0) return false;
    if (got < n) return absl::DataLossError(absl::StrCat(path, ": a record is cut short"));
    XXH64_update(hash, out->data(), n);
    return true;
  };
  std::string length, record;
  uint64_t changes = 0;
  while (true) {
    ASSIGN_OR_RETURN(bool more, read(4, &length));
    if (!more) break;
    uint32_t n = 0;
    for (int i = 0; i < 4; ++i) n |= static_cast<uint32_t>(static_cast<uint8_t>(length[i])) << (8 * i);
    if (n > kMaxRecord) return absl::DataLossError(absl::StrCat(path, ": a record of ", n, " bytes"));
    ASSIGN_OR_RETURN(more, read(n, &record));
    if (!more && n > 0) return absl::DataLossError(absl::StrCat(path, ": a record is cut short"));
    absl::StatusOr<ShardChange> change = DecodeShardChange(record);
    if (!change.ok()) {
      return absl::DataLossError(absl::StrCat(path, " record ", changes, ": ",
                                              change.status().message()));
    }
    ++changes;
    RETURN_IF_ERROR(fn(*std::move(change)));
  }
  if (changes != shard.changes || XXH64_digest(hash) != shard.xxh64) {
    return absl::DataLossError(absl::StrCat(path, " does not match the manifest (", changes,
                                            " changes read; its hash differs or the count)"));
  }
  return absl::OkStatus();
}

}  // namespace neodb::cluster
