#include "cluster/shard_map.h"

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "xxhash.h"

namespace neodb::cluster {

absl::Status CheckShardCount(uint32_t shards) {
  if (shards < 1 || shards > kMaxShards) {
    return absl::InvalidArgumentError(
        absl::StrCat("a collection has 1..", kMaxShards, " shards, not ", shards));
  }
  return absl::OkStatus();
}

uint32_t ShardOf(const std::string& doc_id, uint32_t shards) {
  if (shards <= 1) return 0;
  // A seed of our own, fixed forever: changing it moves every document.
  constexpr uint64_t kSeed = 0x6e656f6462ULL;  // "neodb"
  return static_cast<uint32_t>(XXH64(doc_id.data(), doc_id.size(), kSeed) % shards);
}

std::string LogName(const std::string& collection, uint32_t generation) {
  if (generation == 0) return collection;
  return absl::StrCat(collection, "@g", generation);
}

std::string ShardStreamName(const std::string& collection, uint32_t shard) {
  return absl::StrCat("neodb-", collection, "-", shard);
}

std::string ShardSubjects(const std::string& collection, uint32_t shard) {
  return absl::StrCat("neodb.", collection, ".", shard, ".*");
}

std::string DocumentSubject(const std::string& collection, uint32_t shard,
                            const std::string& doc_id) {
  // Hex: a document id may hold any bytes, a subject token may not ('.',
  // '*', '>', white space); hex is one token whatever the id.
  return absl::StrCat("neodb.", collection, ".", shard, ".", absl::BytesToHexString(doc_id));
}

}  // namespace neodb::cluster
