// Database: documents chosen by a filter or by ids, acted on whole: count,
// delete by filter, metadata updates that keep text and vector. Every change
// is an ordinary store write (Store::Delete, Store::Upsert of the document
// with its new metadata), so the change log, replay, backups and replicas
// need nothing new.
#include <algorithm>

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "engine/database.h"
#include "engine/tenant_scope.h"
#include "engine/text_checks.h"

namespace neodb::engine {
namespace {

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

absl::StatusOr<uint64_t> Database::Count(const std::string& collection, const db::Filter* filter,
                                         std::string_view tenant) const {
  ASSIGN_OR_RETURN(std::shared_ptr<Collection> c, Find(collection));
  std::shared_ptr<const Collection::State> state = c->state();
  ASSIGN_OR_RETURN(const TenantScope scope, TenantScope::For(state->settings.spec, tenant));
  if (filter == nullptr && scope.whole()) return store_->Count(collection);
  return state->indexes->metadata().CountMatching(filter, scope.tenant());
}

absl::StatusOr<std::vector<std::pair<std::string, uint64_t>>> Database::Tenants(
    const std::string& collection) const {
  ASSIGN_OR_RETURN(std::shared_ptr<Collection> c, Find(collection));
  std::shared_ptr<const Collection::State> state = c->state();
  if (!state->settings.spec.multi_tenant) {
    return absl::FailedPreconditionError(
        absl::StrCat("collection '", collection, "' is not multi-tenant"));
  }
  return state->indexes->metadata().TenantCounts();
}

absl::Status Database::CommitSelection(const std::shared_ptr<Collection>& c, const char* what,
                                      const std::vector<std::string>& ids, size_t batch_size,
                                      const db::Filter* filter, const CancelCheck& cancelled,
                                      std::vector<std::string>* missing, const BatchCommit& commit,
                                      uint64_t* done) {
  const std::string& collection = c->name();
  uint64_t batch_number = 0;
  for (size_t start = 0; start < ids.size(); start += batch_size) {
    PauseBeforeSelectionBatch(++batch_number);
    if (cancelled && cancelled()) {
      return Interrupted(collection, what, *done, absl::CancelledError("cancelled"));
    }
    std::lock_guard<std::mutex> wlock(c->write_mu());
    if (c->dropped) {
      return Interrupted(collection, what, *done,
                         absl::AbortedError("the collection was dropped or re-created"));
    }
    // Under the write lock: the documents as they are now, so one that a
    // write changed since the selection is acted on only if it still matches.
    std::vector<db::Document> selected;
    for (size_t i = start; i < std::min(ids.size(), start + batch_size); ++i) {
      absl::StatusOr<db::Document> d = store_->Get(collection, ids[i]);
      if (absl::IsNotFound(d.status())) {
        if (missing != nullptr) missing->push_back(ids[i]);
        continue;
      }
      RETURN_IF_ERROR(d.status());
      if (filter == nullptr || filter->Matches(d->metadata)) selected.push_back(*std::move(d));
    }
    const uint64_t after = store_->LastSequence();
    absl::StatusOr<uint64_t> changed = commit(std::move(selected));
    if (!changed.ok()) return Interrupted(collection, what, *done, changed.status());
    *done += *changed;
    if (*changed > 0) RETURN_IF_ERROR(c->CatchUp(after));
  }
  return absl::OkStatus();
}

absl::StatusOr<uint64_t> Database::DeleteWhere(const std::string& collection,
                                               const db::Filter* filter, std::string_view tenant,
                                               const CancelCheck& cancelled) {
  RETURN_IF_ERROR(RefuseIfReplicated(collection, "its deletes"));
  ASSIGN_OR_RETURN(std::shared_ptr<Collection> c, Find(collection));
  std::shared_ptr<const Collection::State> state = c->state();
  ASSIGN_OR_RETURN(const TenantScope scope, TenantScope::For(state->settings.spec, tenant));
  if (filter == nullptr && scope.whole()) {
    return absl::InvalidArgumentError(
        "a delete without a filter deletes a tenant and must name one "
        "(drop a collection to empty it)");
  }
  const std::vector<std::string> ids =
      state->indexes->metadata().MatchingDocumentIds(filter, scope.tenant());
  state.reset();
  uint64_t deleted = 0;
  RETURN_IF_ERROR(CommitSelection(
      c, "delete", ids, kSelectionBatch, filter, cancelled, /*missing=*/nullptr,
      [&](std::vector<db::Document> docs) -> absl::StatusOr<uint64_t> {
        std::vector<std::string> doomed;
        for (db::Document& d : docs) doomed.push_back(std::move(d.id));
        ASSIGN_OR_RETURN(std::vector<uint64_t> seqs, store_->Delete(collection, doomed));
        return seqs.size();
      },
      &deleted));
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
  ASSIGN_OR_RETURN(const TenantScope scope, TenantScope::For(c->state()->settings.spec, which.tenant));
  RETURN_IF_ERROR(memory_budget_->Admit("metadata update"));
  const db::Filter* filter = which.filter ? &*which.filter : nullptr;
  std::vector<std::string> ids;
  if (filter != nullptr) {
    ids = c->state()->indexes->metadata().MatchingDocumentIds(filter, scope.tenant());
  } else {
    for (const std::string& id : which.ids) {
      RETURN_IF_ERROR(CheckDocumentId(id));
      if (!scope.Owns(id)) {
        return absl::InvalidArgumentError(
            absl::StrCat("document '", id, "' is not tenant '", scope.tenant(), "''s"));
      }
    }
    ids = which.ids;
    std::sort(ids.begin(), ids.end());
    ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
  }
  MetadataUpdateResult result;
  // By ids the whole call is one batch (all or nothing); by filter, batches.
  const size_t batch_size = filter != nullptr ? kSelectionBatch : std::max<size_t>(1, ids.size());
  RETURN_IF_ERROR(CommitSelection(
      c, "metadata update", ids, batch_size, filter, cancelled,
      filter != nullptr ? nullptr : &result.missing_ids,
      [&](std::vector<db::Document> docs) -> absl::StatusOr<uint64_t> {
        result.matched += docs.size();
        std::vector<db::Document> changed;
        for (db::Document& d : docs) {
          db::Metadata updated = ApplyPatch(d.metadata, patch);
          if (updated == d.metadata) continue;
          if (absl::Status s = db::ValidateMetadata(updated); !s.ok()) {
            return absl::InvalidArgumentError(
                absl::StrCat("document '", d.id, "' after the update: ", s.message()));
          }
          d.metadata = std::move(updated);
          changed.push_back(std::move(d));
        }
        if (changed.empty()) return 0;
        const size_t n = changed.size();
        RETURN_IF_ERROR(store_->Upsert(collection, std::move(changed)).status());
        return n;
      },
      &result.updated));
  return result;
}

}  // namespace neodb::engine
