// Database: documents chosen by a filter or by ids, acted on whole: count,
// delete by filter, metadata updates that keep text and vector. Every change
// is an ordinary store write (Store::Delete, Store::Upsert of the document
// with its new metadata), so the change log, replay, backups and replicas
// need nothing new.
#include <algorithm>
#include <thread>

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "engine/database.h"
#include "engine/text_checks.h"

namespace neodb::engine {
namespace {

// The batches of `ids` (sorted) a selection commits one by one.
std::vector<std::span<const std::string>> Batches(const std::vector<std::string>& ids,
                                                  size_t size) {
  std::vector<std::span<const std::string>> out;
  for (size_t i = 0; i < ids.size(); i += size) {
    out.emplace_back(ids.data() + i, std::min(size, ids.size() - i));
  }
  return out;
}

absl::Status Interrupted(const std::string& collection, const char* what, uint64_t done,
                         absl::Status cause) {
  return absl::Status(cause.code(), absl::StrCat(cause.message(), " (", what, " of collection '",
                                                 collection, "' stopped after ", done,
                                                 " documents; they stay changed)"));
}

}  // namespace

void Database::PauseBeforeSelectionBatch(uint64_t batch_number) const {
  if (batch_number == options_.test_selection_pause_at && options_.test_pause) {
    options_.test_pause(absl::StrCat("selection batch ", batch_number));
  }
}

absl::StatusOr<uint64_t> Database::Count(const std::string& collection,
                                         const db::Filter* filter) const {
  ASSIGN_OR_RETURN(std::shared_ptr<Collection> c, Find(collection));
  if (filter == nullptr) return store_->Count(collection);
  return c->state()->indexes->metadata().CountMatching(filter);
}

absl::StatusOr<uint64_t> Database::DeleteWhere(const std::string& collection,
                                               const db::Filter& filter,
                                               const CancelCheck& cancelled) {
  RETURN_IF_ERROR(RefuseIfReplicated(collection, "its deletes"));
  ASSIGN_OR_RETURN(std::shared_ptr<Collection> c, Find(collection));
  const std::vector<std::string> candidates =
      c->state()->indexes->metadata().MatchingDocumentIds(&filter);
  uint64_t deleted = 0;
  uint64_t batch_number = 0;
  for (std::span<const std::string> batch : Batches(candidates, kSelectionBatch)) {
    PauseBeforeSelectionBatch(++batch_number);
    if (cancelled && cancelled()) {
      return Interrupted(collection, "delete", deleted, absl::CancelledError("cancelled"));
    }
    std::lock_guard<std::mutex> wlock(write_mu_);
    ASSIGN_OR_RETURN(std::shared_ptr<Collection> now, Find(collection));
    if (now != c) {
      return Interrupted(collection, "delete", deleted,
                         absl::AbortedError("the collection was dropped or re-created"));
    }
    // Under the write lock: the documents as they are now, so one that a
    // write changed since the selection is deleted only if it still matches.
    std::vector<std::string> doomed;
    for (const std::string& id : batch) {
      absl::StatusOr<db::Document> d = store_->Get(collection, id);
      if (absl::IsNotFound(d.status())) continue;
      RETURN_IF_ERROR(d.status());
      if (filter.Matches(d->metadata)) doomed.push_back(id);
    }
    ASSIGN_OR_RETURN(std::vector<uint64_t> seqs, store_->Delete(collection, doomed));
    deleted += seqs.size();
    RETURN_IF_ERROR(CatchUpLocked());
  }
  return deleted;
}

absl::StatusOr<MetadataUpdateResult> Database::UpdateMetadata(const std::string& collection,
                                                              const DocumentSelection& which,
                                                              const MetadataPatch& patch,
                                                              const CancelCheck& cancelled) {
  RETURN_IF_ERROR(RefuseIfReplicated(collection, "its metadata updates"));
  RETURN_IF_ERROR(ValidatePatch(patch));
  if (which.filter.has_value() == !which.ids.empty()) {
    return absl::InvalidArgumentError("select the documents by ids or by a filter (one of them)");
  }
  ASSIGN_OR_RETURN(std::shared_ptr<Collection> c, Find(collection));
  RETURN_IF_ERROR(memory_budget_->Admit("metadata update"));
  const db::Filter* filter = which.filter ? &*which.filter : nullptr;
  std::vector<std::string> ids;
  if (filter != nullptr) {
    ids = c->state()->indexes->metadata().MatchingDocumentIds(filter);
  } else {
    for (const std::string& id : which.ids) RETURN_IF_ERROR(CheckDocumentId(id));
    ids = which.ids;
    std::sort(ids.begin(), ids.end());
    ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
  }
  // By ids the whole call is one batch (all or nothing); by filter, batches.
  const size_t batch_size = filter != nullptr ? kSelectionBatch : std::max<size_t>(1, ids.size());
  MetadataUpdateResult result;
  uint64_t batch_number = 0;
  for (std::span<const std::string> batch : Batches(ids, batch_size)) {
    PauseBeforeSelectionBatch(++batch_number);
    if (cancelled && cancelled()) {
      return Interrupted(collection, "metadata update", result.updated,
                         absl::CancelledError("cancelled"));
    }
    std::lock_guard<std::mutex> wlock(write_mu_);
    ASSIGN_OR_RETURN(std::shared_ptr<Collection> now, Find(collection));
    if (now != c) {
      return Interrupted(collection, "metadata update", result.updated,
                         absl::AbortedError("the collection was dropped or re-created"));
    }
    std::vector<db::Document> changed;
    for (const std::string& id : batch) {
      absl::StatusOr<db::Document> d = store_->Get(collection, id);
      if (absl::IsNotFound(d.status())) {
        if (filter == nullptr) result.missing_ids.push_back(id);
        continue;
      }
      RETURN_IF_ERROR(d.status());
      if (filter != nullptr && !filter->Matches(d->metadata)) continue;
      ++result.matched;
      db::Metadata updated = ApplyPatch(d->metadata, patch);
      if (updated == d->metadata) continue;
      if (absl::Status s = db::ValidateMetadata(updated); !s.ok()) {
        return Interrupted(collection, "metadata update", result.updated,
                           absl::InvalidArgumentError(absl::StrCat(
                               "document '", id, "' after the update: ", s.message())));
      }
      d->metadata = std::move(updated);
      changed.push_back(*std::move(d));
    }
    if (changed.empty()) continue;
    const size_t n = changed.size();
    RETURN_IF_ERROR(store_->Upsert(collection, std::move(changed)).status());
    result.updated += n;
    RETURN_IF_ERROR(CatchUpLocked());
  }
  return result;
}

}  // namespace neodb::engine
