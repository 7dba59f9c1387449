#include "cluster/cluster_map.h"

#include <algorithm>
#include <limits>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "cluster/shard_map.h"
#include "common/status_macros.h"
#include "db/codec.h"
#include "nlohmann/json.hpp"
#include "xxhash.h"

namespace neodb::cluster {
namespace {

constexpr char kCollectionsBucket[] = "neodb-collections";
constexpr char kNodesBucket[] = "neodb-nodes";

absl::StatusOr<kvStore*> OpenBucket(const NatsClient& nats, const char* bucket, int replicas,
                                    absl::Duration ttl) {
  kvConfig cfg;
  kvConfig_Init(&cfg);
  cfg.Bucket = bucket;
  cfg.History = 1;
  cfg.Replicas = replicas;
  cfg.StorageType = js_FileStorage;
  cfg.TTL = absl::ToInt64Nanoseconds(ttl);  // the stream's MaxAge (0: none)
  kvStore* kv = nullptr;
  natsStatus s = js_CreateKeyValue(&kv, nats.jetstream(), &cfg);
  if (s == NATS_OK) return kv;
  // There already, perhaps created by another node with other settings: bind to it.
  s = js_KeyValue(&kv, nats.jetstream(), bucket);
  if (s != NATS_OK) {
    return NatsStatus(s, static_cast<jsErrCode>(0), absl::StrCat("opening bucket ", bucket));
  }
  return kv;
}

struct EntryDeleter {
  void operator()(kvEntry* e) const { kvEntry_Destroy(e); }
};
using EntryPtr = std::unique_ptr<kvEntry, EntryDeleter>;

absl::StatusOr<std::vector<std::string>> Keys(kvStore* kv, const std::string& what) {
  kvKeysList list;
  kvWatchOptions o;
  kvWatchOptions_Init(&o);
  o.Timeout = 5000;
  natsStatus s = kvStore_Keys(&list, kv, &o);
  if (s == NATS_NOT_FOUND) return std::vector<std::string>{};  // an empty bucket
  if (s != NATS_OK) return NatsStatus(s, static_cast<jsErrCode>(0), absl::StrCat("listing ", what));
  std::vector<std::string> keys;
  for (int i = 0; i < list.Count; ++i) keys.emplace_back(list.Keys[i]);
  kvKeysList_Destroy(&list);
  std::sort(keys.begin(), keys.end());
  return keys;
}

}  // namespace

absl::Status CheckNodeId(const std::string& node_id) {
  if (node_id.empty() || node_id.size() > 64) {
    return absl::InvalidArgumentError(
        absl::StrCat("node id '", node_id, "' must have 1 to 64 characters"));
  }
  for (char c : node_id) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                    c == '_' || c == '-';
    if (!ok) {
      return absl::InvalidArgumentError(absl::StrCat(
          "node id '", node_id, "' may contain only letters, digits, '_' and '-'"));
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<std::vector<std::vector<std::string>>> PlaceShards(
    const std::string& collection, uint32_t shards, uint32_t replicas,
    const std::vector<std::string>& nodes) {
  RETURN_IF_ERROR(CheckShardCount(shards));
  if (replicas < 1 || replicas > 5) {
    return absl::InvalidArgumentError(absl::StrCat("a shard has 1..5 replicas, not ", replicas));
  }
  if (nodes.size() < replicas) {
    return absl::FailedPreconditionError(absl::StrCat(
        replicas, " replicas per shard need ", replicas, " live nodes; ", nodes.size(),
        " are live"));
  }
  std::vector<std::vector<std::string>> placement(shards);
  for (uint32_t s = 0; s < shards; ++s) {
    std::vector<std::pair<uint64_t, std::string>> ranked;
    for (const std::string& n : nodes) {
      const std::string key = absl::StrCat(collection, "/", s, "/", n);
      ranked.emplace_back(XXH64(key.data(), key.size(), 0x6e656f6462ULL), n);
    }
    std::sort(ranked.begin(), ranked.end(), std::greater<>());
    for (uint32_t r = 0; r < replicas; ++r) placement[s].push_back(ranked[r].second);
  }
  return placement;
}

std::string ShardedCollection::log() const { return LogName(spec.name, generation); }

std::string EncodeShardedCollection(const ShardedCollection& c) {
  nlohmann::json j;
  j["spec"] = absl::Base64Escape(db::EncodeCollectionSpec(c.spec));
  j["model_id"] = c.model_id;
  j["shards"] = c.shards;
  j["replicas"] = c.replicas;
  j["placement"] = c.placement;
  j["generation"] = c.generation;
  j["reindex_to"] = c.reindex_to;
  j["dropped"] = c.dropped;
  return j.dump();
}

absl::StatusOr<ShardedCollection> DecodeShardedCollection(const std::string& bytes) {
  auto bad = [](const std::string& why) {
    return absl::InvalidArgumentError(absl::StrCat("cluster map entry: ", why));
  };
  nlohmann::json j = nlohmann::json::parse(bytes, nullptr, false);
  if (j.is_discarded() || !j.is_object()) return bad("not a JSON object");
  if (!j.contains("spec") || !j["spec"].is_string() || !j.contains("model_id") ||
      !j["model_id"].is_string() || !j.contains("shards") || !j["shards"].is_number_unsigned() ||
      !j.contains("replicas") || !j["replicas"].is_number_unsigned() ||
      !j.contains("placement") || !j["placement"].is_array()) {
    return bad("spec, model_id, shards, replicas or placement missing or of the wrong type");
  }
  ShardedCollection c;
  std::string spec_bytes;
  if (!absl::Base64Unescape(j["spec"].get<std::string>(), &spec_bytes)) return bad("spec is not base64");
  absl::StatusOr<db::CollectionSpec> spec = db::DecodeCollectionSpec(spec_bytes);
  if (!spec.ok()) return bad(std::string(spec.status().message()));
  c.spec = *std::move(spec);
  RETURN_IF_ERROR(db::ValidateCollectionName(c.spec.name));
  c.model_id = j["model_id"].get<std::string>();
  const uint64_t shards = j["shards"].get<uint64_t>(), replicas = j["replicas"].get<uint64_t>();
  if (shards < 1 || shards > kMaxShards || replicas < 1 || replicas > 5) {
    return bad(absl::StrCat(shards, " shards × ", replicas, " replicas is out of range"));
  }
  c.shards = static_cast<uint32_t>(shards);
  c.replicas = static_cast<uint32_t>(replicas);
  if (j["placement"].size() != shards) return bad("placement does not list every shard");
  for (const nlohmann::json& nodes : j["placement"]) {
    // While a rebalance moves a shard its placement lists the old and the
    // new nodes together: replicas to twice as many.
    if (!nodes.is_array() || nodes.size() < replicas || nodes.size() > 2 * replicas) {
      return bad("a shard's placement does not list its replicas");
    }
    std::vector<std::string> ids;
    for (const nlohmann::json& n : nodes) {
      if (!n.is_string()) return bad("a node id is not a string");
      RETURN_IF_ERROR(CheckNodeId(n.get<std::string>()));
      if (std::find(ids.begin(), ids.end(), n.get<std::string>()) != ids.end()) {
        return bad("a shard's placement lists a node twice");
      }
      ids.push_back(n.get<std::string>());
    }
    c.placement.push_back(std::move(ids));
  }
  // Both absent from entries written before cluster reindexes existed.
  if (j.contains("generation")) {
    if (!j["generation"].is_number_unsigned() ||
        j["generation"].get<uint64_t>() > std::numeric_limits<uint32_t>::max()) {
      return bad("generation is not a count");
    }
    c.generation = j["generation"].get<uint32_t>();
  }
  if (j.contains("dropped")) {
    if (!j["dropped"].is_boolean()) return bad("dropped is not a boolean");
    c.dropped = j["dropped"].get<bool>();
  }
  if (j.contains("reindex_to")) {
    if (!j["reindex_to"].is_string()) return bad("reindex_to is not a string");
    c.reindex_to = j["reindex_to"].get<std::string>();
  }
  return c;
}

absl::StatusOr<std::unique_ptr<ClusterMap>> ClusterMap::Open(const NatsClient& nats,
                                                             const ClusterMapOptions& options) {
  std::unique_ptr<ClusterMap> m(new ClusterMap());
  ASSIGN_OR_RETURN(m->collections_,
                   OpenBucket(nats, kCollectionsBucket, options.replicas, absl::ZeroDuration()));
  ASSIGN_OR_RETURN(m->nodes_, OpenBucket(nats, kNodesBucket, options.replicas, options.node_ttl));
  return m;
}

ClusterMap::~ClusterMap() {
  if (collections_ != nullptr) kvStore_Destroy(collections_);
  if (nodes_ != nullptr) kvStore_Destroy(nodes_);
}

absl::Status ClusterMap::Heartbeat(const std::string& node_id, const std::string& info) {
  RETURN_IF_ERROR(CheckNodeId(node_id));
  uint64_t rev = 0;
  natsStatus s = kvStore_Put(&rev, nodes_, node_id.c_str(), info.data(),
                             static_cast<int>(info.size()));
  return NatsStatus(s, static_cast<jsErrCode>(0), absl::StrCat("heartbeat of node ", node_id));
}

absl::StatusOr<std::vector<std::string>> ClusterMap::LiveNodes() const {
  return Keys(nodes_, "live nodes");
}

absl::StatusOr<std::map<std::string, std::string>> ClusterMap::LiveNodeInfo() const {
  ASSIGN_OR_RETURN(std::vector<std::string> ids, LiveNodes());
  std::map<std::string, std::string> out;
  for (const std::string& id : ids) {
    kvEntry* raw = nullptr;
    natsStatus s = kvStore_Get(&raw, nodes_, id.c_str());
    if (s == NATS_NOT_FOUND) continue;  // expired meanwhile
    if (s != NATS_OK) {
      return NatsStatus(s, static_cast<jsErrCode>(0), absl::StrCat("reading node ", id));
    }
    EntryPtr e(raw);
    out[id] = std::string(static_cast<const char*>(kvEntry_Value(e.get())),
                          static_cast<size_t>(kvEntry_ValueLen(e.get())));
  }
  return out;
}

absl::Status ClusterMap::Create(const ShardedCollection& c) {
  const std::string value = EncodeShardedCollection(c);
  uint64_t rev = 0;
  natsStatus s = kvStore_Create(&rev, collections_, c.spec.name.c_str(), value.data(),
                                static_cast<int>(value.size()));
  if (s == NATS_OK) return absl::OkStatus();
  absl::Status st = NatsStatus(s, static_cast<jsErrCode>(0),
                               absl::StrCat("adding collection '", c.spec.name, "' to the map"));
  // kvStore_Create fails on a key that has a value.
  if (Get(c.spec.name).ok()) {
    return absl::AlreadyExistsError(
        absl::StrCat("collection '", c.spec.name, "' already exists in the cluster"));
  }
  return st;
}

absl::StatusOr<ShardedCollection> ClusterMap::Get(const std::string& name) const {
  ASSIGN_OR_RETURN(Versioned v, GetVersioned(name));
  return std::move(v.collection);
}

absl::Status ClusterMap::Update(const ShardedCollection& c, uint64_t revision) {
  const std::string value = EncodeShardedCollection(c);
  uint64_t rev = 0;
  jsErrCode jerr = static_cast<jsErrCode>(0);
  natsStatus s = kvStore_Update(&rev, collections_, c.spec.name.c_str(), value.data(),
                                static_cast<int>(value.size()), revision);
  if (s == NATS_OK) return absl::OkStatus();
  // The update is refused when the entry moved on since `revision` (JetStream's
  // "wrong last sequence"): another node changed it.
  absl::Status st = NatsStatus(s, jerr, absl::StrCat("updating collection '", c.spec.name,
                                                     "' in the map"));
  absl::StatusOr<Versioned> now = GetVersioned(c.spec.name);
  if (now.ok() && now->revision != revision) {
    return absl::AbortedError(absl::StrCat("collection '", c.spec.name,
                                           "' changed in the map meanwhile (another rebalance?); "
                                           "run it again"));
  }
  return st;
}

absl::StatusOr<ClusterMap::Versioned> ClusterMap::GetVersioned(const std::string& name) const {
  RETURN_IF_ERROR(db::ValidateCollectionName(name));
  kvEntry* raw = nullptr;
  natsStatus s = kvStore_Get(&raw, collections_, name.c_str());
  if (s == NATS_NOT_FOUND) {
    return absl::NotFoundError(absl::StrCat("collection '", name, "' is not in the cluster"));
  }
  if (s != NATS_OK) {
    return NatsStatus(s, static_cast<jsErrCode>(0), absl::StrCat("reading collection '", name, "'"));
  }
  EntryPtr e(raw);
  const std::string value(static_cast<const char*>(kvEntry_Value(e.get())),
                          static_cast<size_t>(kvEntry_ValueLen(e.get())));
  Versioned v;
  ASSIGN_OR_RETURN(v.collection, DecodeShardedCollection(value));
  v.revision = kvEntry_Revision(e.get());
  return v;
}

absl::StatusOr<std::vector<ShardedCollection>> ClusterMap::List() const {
  ASSIGN_OR_RETURN(std::vector<std::string> names, Keys(collections_, "collections"));
  std::vector<ShardedCollection> out;
  for (const std::string& n : names) {
    absl::StatusOr<ShardedCollection> c = Get(n);
    if (absl::IsNotFound(c.status())) continue;  // removed meanwhile
    if (!c.ok()) return c.status();
    out.push_back(*std::move(c));
  }
  return out;
}

absl::Status ClusterMap::Remove(const std::string& name) {
  RETURN_IF_ERROR(db::ValidateCollectionName(name));
  natsStatus s = kvStore_Delete(collections_, name.c_str());
  return NatsStatus(s, static_cast<jsErrCode>(0), absl::StrCat("removing collection '", name, "'"));
}

}  // namespace neodb::cluster
