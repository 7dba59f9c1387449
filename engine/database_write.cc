// Database: the write path (upsert, delete). Each write holds its
// collection's write lock from the store commit until Collection::CatchUp has
// carried it into the indexes; writes to other collections do not wait.
#include "absl/strings/str_cat.h"
#include "engine/database.h"
#include "engine/text_checks.h"
#include "common/status_macros.h"

namespace neodb::engine {

absl::StatusOr<Collection::PreparedWrite> Database::PrepareUpsert(
    const std::string& collection, std::vector<DocumentInput> docs, absl::Time deadline,
    const CancelCheck& cancelled) {
  if (docs.empty()) return absl::InvalidArgumentError("no documents to upsert");
  RETURN_IF_ERROR(memory_budget_->Admit("upsert"));
  ASSIGN_OR_RETURN(std::shared_ptr<Collection> c, Find(collection));
  std::shared_ptr<const Collection::State> state = c->state();
  // External vectors need no model (and the write must not fail for want of one).
  std::shared_ptr<Model> m;
  if (state->settings.source != VectorSource::kExternal) {
    ASSIGN_OR_RETURN(m, ModelOf(*state));
  }
  return Collection::PrepareWrite(*state, m.get(), std::move(docs), options_.max_request_tokens,
                                  deadline, cancelled);
}

void Database::MarkReplicated(const std::string& collection) {
  std::lock_guard<std::mutex> lock(replicated_mu_);
  replicated_.insert(collection);
}

bool Database::IsReplicated(const std::string& collection) const {
  std::lock_guard<std::mutex> lock(replicated_mu_);
  return replicated_.count(collection) > 0;
}

absl::Status Database::RefuseIfReplicated(const std::string& collection, const char* what) const {
  if (!IsReplicated(collection)) return absl::OkStatus();
  return absl::FailedPreconditionError(absl::StrCat(
      "collection '", collection, "' is a sharded collection of the cluster: ", what,
      " must go through the cluster (its shard logs), not this node alone"));
}

absl::StatusOr<std::vector<std::string>> Database::Upsert(const std::string& collection,
                                                          std::vector<DocumentInput> docs,
                                                          absl::Time deadline, int64_t* tokens,
                                                          const CancelCheck& cancelled) {
  RETURN_IF_ERROR(RefuseIfReplicated(collection, "its writes"));
  // A store read-only since a full-disk start refuses before any embedding
  // is spent on the documents (or reopens writable, if there is room now).
  RETURN_IF_ERROR(store_->TryReopenWritable());
  ASSIGN_OR_RETURN(std::shared_ptr<Collection> c, Find(collection));
  ASSIGN_OR_RETURN(Collection::PreparedWrite write,
                   PrepareUpsert(collection, std::move(docs), deadline, cancelled));
  if (tokens) *tokens = write.tokens;
  const std::string model_id = write.documents.front().model_id;  // never empty

  std::lock_guard<std::mutex> wlock(c->write_mu());
  // The collection may have been dropped, re-created or reindexed to another
  // model while we embedded.
  if (c->dropped || c->state()->settings.spec.model_id != model_id) {
    return absl::AbortedError(absl::StrCat("collection '", collection,
                                           "' changed (dropped or reindexed) during the "
                                           "upsert; retry"));
  }
  const uint64_t after = store_->LastSequence();
  RETURN_IF_ERROR(store_->Upsert(collection, std::move(write.documents)).status());
  RETURN_IF_ERROR(c->CatchUp(after));
  return std::move(write.ids);
}

absl::Status Database::ApplyReplicatedUpserts(const std::string& collection,
                                              std::vector<db::Document> docs,
                                              const db::SourcePosition& from) {
  std::unique_lock<std::mutex> wlock;
  ASSIGN_OR_RETURN(std::shared_ptr<Collection> c, FindLocked(collection, &wlock));
  // Under the write lock, so no reindex moves the collection to another
  // model between this check and the commit. The store checks the rest
  // (ids, dimension, finite values, metadata).
  const std::string& model_id = c->state()->settings.spec.model_id;
  for (const db::Document& d : docs) {
    if (d.model_id != model_id) {
      return absl::FailedPreconditionError(absl::StrCat(
          "replicated document '", d.id, "' carries a vector of '", d.model_id,
          "', but this replica's collection '", collection, "' holds vectors of '", model_id,
          "'"));
    }
  }
  const uint64_t after = store_->LastSequence();
  RETURN_IF_ERROR(store_->Upsert(collection, std::move(docs), &from).status());
  return c->CatchUp(after);
}

absl::Status Database::ApplyReplicatedDeletes(const std::string& collection,
                                              const std::vector<std::string>& ids,
                                              const db::SourcePosition& from) {
  std::unique_lock<std::mutex> wlock;
  ASSIGN_OR_RETURN(std::shared_ptr<Collection> c, FindLocked(collection, &wlock));
  const uint64_t after = store_->LastSequence();
  RETURN_IF_ERROR(store_->Delete(collection, ids, &from).status());
  return c->CatchUp(after);
}

absl::StatusOr<uint64_t> Database::SourcePositionOf(const std::string& collection,
                                                    const std::string& source) const {
  return store_->SourcePositionOf(collection, source);
}

absl::StatusOr<uint64_t> Database::Delete(const std::string& collection,
                                          const std::vector<std::string>& ids) {
  RETURN_IF_ERROR(RefuseIfReplicated(collection, "its deletes"));
  RETURN_IF_ERROR(Find(collection).status());
  for (const auto& id : ids) RETURN_IF_ERROR(CheckDocumentId(id));
  std::unique_lock<std::mutex> wlock;
  ASSIGN_OR_RETURN(std::shared_ptr<Collection> c, FindLocked(collection, &wlock));
  const uint64_t after = store_->LastSequence();
  ASSIGN_OR_RETURN(std::vector<uint64_t> seqs, store_->Delete(collection, ids));
  RETURN_IF_ERROR(c->CatchUp(after));
  return seqs.size();
}

}  // namespace neodb::engine
