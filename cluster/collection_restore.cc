// ClusterNode::BackupCollection and RestoreCollection: a sharded collection's
// backup from its log, and a collection made from one (collection_backup.h).
#include <set>

#include "absl/strings/str_cat.h"
#include "cluster/cluster_node.h"
#include "cluster/shard_map.h"
#include "common/status_macros.h"
#include "spdlog/spdlog.h"

namespace neodb::cluster {
namespace {

constexpr size_t kRestoreBatch = 256;

}  // namespace

absl::StatusOr<CollectionBackup> ClusterNode::BackupCollection(const std::string& collection,
                                                              const std::string& dir) {
  ASSIGN_OR_RETURN(ShardedCollection c, Entry(collection));
  if (!c.reindex_to.empty()) {
    return absl::FailedPreconditionError(absl::StrCat(
        "collection '", collection, "' is being reindexed; back it up afterwards"));
  }
  return cluster::BackupCollection(Env::Default(), *nats_, c, dir);
}

absl::StatusOr<ClusterNode::Restored> ClusterNode::RestoreCollection(
    const std::string& dir, const std::string& name, uint32_t shards, uint32_t replicas,
    absl::Time deadline) {
  Env* env = Env::Default();
  ASSIGN_OR_RETURN(CollectionBackup b, ReadCollectionBackup(env, dir));
  // Every record checked before anything is created: the hashes, and that
  // each document is one the new collection can take (a replica refuses a
  // vector of another model or size, and would stop there).
  const ShardedCollection& from = b.entry;
  for (const CollectionBackup::Shard& sh : b.shards) {
    RETURN_IF_ERROR(ForEachBackedUpChange(env, dir, sh, [&](const ShardChange& c) {
      if (c.op == ShardChange::Op::kUpsert &&
          (c.document.model_id != from.model_id ||
           c.document.vector.size() != from.spec.dimension)) {
        return absl::DataLossError(absl::StrCat(
            "backup ", dir, ": document '", c.document.id, "' has a vector of ",
            c.document.model_id, " (", c.document.vector.size(), " dimensions), the collection's are ",
            from.model_id, " (", from.spec.dimension, ")"));
      }
      return absl::OkStatus();
    }));
  }
  db::CollectionSpec spec = from.spec;
  if (!name.empty()) spec.name = name;
  spec.created_at_micros = 0;  // a new collection, not the backed-up one's incarnation
  ASSIGN_OR_RETURN(ShardedCollection c,
                   CreateCollection(spec, shards == 0 ? from.shards : shards,
                                    replicas == 0 ? from.replicas : replicas));
  if (c.model_id != from.model_id) {
    absl::Status dropped = DropCollection(c.spec.name);
    return absl::FailedPreconditionError(absl::StrCat(
        "backup ", dir, " holds vectors of ", from.model_id, ", but this cluster's model is ",
        c.model_id, ": restore it into a cluster on that model",
        dropped.ok() ? "" : absl::StrCat(" (dropping the new collection failed: ",
                                          dropped.message(), ")")));
  }
  spdlog::info("restoring '{}' from {}: {} changes into {} shards", c.spec.name, dir, b.changes(),
               c.shards);
  Restored out;
  std::vector<ShardChange> batch;
  std::vector<std::string> ids;
  std::set<std::string> in_batch;
  auto flush = [&]() -> absl::Status {
    if (batch.empty()) return absl::OkStatus();
    RETURN_IF_ERROR(
        writer_.PublishWithIds(c.log(), c.shards, batch, ids, deadline, &out.token));
    out.changes += batch.size();
    batch.clear();
    ids.clear();
    in_batch.clear();
    return absl::OkStatus();
  };
  for (const CollectionBackup::Shard& sh : b.shards) {
    uint64_t index = 0;
    RETURN_IF_ERROR(ForEachBackedUpChange(env, dir, sh, [&](ShardChange change) -> absl::Status {
      // One change per document in a batch (a later one of the same
      // document waits for the next batch: order kept).
      if (in_batch.count(change.doc_id()) > 0 || batch.size() >= kRestoreBatch) {
        RETURN_IF_ERROR(flush());
      }
      in_batch.insert(change.doc_id());
      // The same backup restored again within the publish window stores nothing twice.
      ids.push_back(absl::StrCat("restore-", c.log(), "-", sh.shard, "-", index++));
      batch.push_back(std::move(change));
      return absl::OkStatus();
    }));
    RETURN_IF_ERROR(flush());
  }
  out.collection = c;
  return out;
}

}  // namespace neodb::cluster
