// Database: snapshots, the maintenance thread (periodic snapshots, rebuilds
// of indexes that ask for one) and Verify.
#include <algorithm>
#include <filesystem>

#include "engine/database.h"
#include "common/status_macros.h"
#include "spdlog/spdlog.h"

namespace neodb::engine {

absl::StatusOr<uint64_t> Database::Snapshot() {
  std::lock_guard<std::mutex> lock(write_mu_);
  const bool pause = pausing_env_ != nullptr && !snapshot_pause_used_;
  if (pause) {
    snapshot_pause_used_ = true;
    pausing_env_->PauseAt(options_.test_snapshot_pause_at, options_.test_pause);
  }
  absl::StatusOr<uint64_t> covered = SnapshotLocked();
  if (pause) pausing_env_->Disarm();
  return covered;
}

absl::StatusOr<uint64_t> Database::SnapshotLocked() {
  // Called with write_mu_ held, or from Startup/Close when nothing else runs.
  const uint64_t covered = applied_seq_;
  for (const auto& c : AllCollections()) {
    RETURN_IF_ERROR(c->SaveSnapshot(env_, SnapshotDir(c->name()), covered, options_.snapshots_kept));
    ++snapshots_written_;
  }
  snapshot_seq_ = covered;
  uint64_t trim = covered;
  if (!pins_.empty()) trim = std::min(trim, *pins_.begin());
  if (trim > 0) RETURN_IF_ERROR(store_->TrimChangelog(trim));
  return covered;
}

bool Database::Stopping() {
  std::lock_guard<std::mutex> lock(maint_mu_);
  return stop_;
}

void Database::MaintenanceLoop() {
  absl::Time last_snapshot = absl::Now();
  std::unique_lock<std::mutex> lock(maint_mu_);
  while (!stop_) {
    maint_cv_.wait_for(lock, std::chrono::milliseconds(500));
    if (stop_) break;
    lock.unlock();
    ProbeWritable();
    // HNSW cannot delete: rebuild when tombstones pile up.
    for (auto& c : AllCollections()) {
      bool rebuild = c->state()->indexes->NeedsRebuild();
      {
        std::lock_guard<std::mutex> wl(write_mu_);
        rebuild = rebuild || c->needs_rebuild;
      }
      if (rebuild) {
        absl::Status s = RebuildIndexes(*c, /*background=*/true);
        if (!s.ok()) spdlog::error("rebuilding '{}': {}", c->name(), s.ToString());
      }
    }
    if (options_.snapshot_interval > absl::ZeroDuration() &&
        absl::Now() - last_snapshot >= options_.snapshot_interval) {
      last_snapshot = absl::Now();
      bool changed;
      {
        std::lock_guard<std::mutex> wl(write_mu_);
        changed = applied_seq_ > snapshot_seq_;
      }
      if (changed) {
        auto s = Snapshot();
        if (!s.ok()) spdlog::error("periodic snapshot: {}", s.status().ToString());
      }
    }
    lock.lock();
  }
}

absl::StatusOr<VerifyReport> Database::Verify(const std::string& name) const {
  ASSIGN_OR_RETURN(std::shared_ptr<Collection> c, Find(name));
  // Hold writes still so the store and the indexes are compared at one point.
  std::lock_guard<std::mutex> wlock(write_mu_);
  auto state = c->state();
  VerifyReport r;
  r.model_id = state->settings.spec.model_id;
  std::vector<int64_t> stored;
  // The deep check of the keyword index: the same documents give the same
  // postings whatever the order of the operations that built them.
  ASSIGN_OR_RETURN(std::unique_ptr<KeywordPart> fresh, KeywordPart::Make(state->settings));
  std::vector<Change> batch;
  RETURN_IF_ERROR(store_->ScanDocuments(name, [&](const db::Document& d) -> absl::Status {
    stored.push_back(static_cast<int64_t>(d.internal_id));
    if (d.model_id != r.model_id) ++r.foreign_model;
    batch.push_back(Change{0, 0, d});
    if (batch.size() >= 1024) {
      RETURN_IF_ERROR(fresh->Apply(batch));
      batch.clear();
    }
    return absl::OkStatus();
  }));
  RETURN_IF_ERROR(fresh->Apply(batch));
  r.keyword_content_matches = fresh->index().Digest() == state->indexes->keyword().index().Digest();
  r.stored = stored.size();
  std::sort(stored.begin(), stored.end());
  // Every derived index must hold exactly the stored ids; the vector index's
  // count is the one reported as `indexed`.
  for (const DerivedIndex* d : state->indexes->all()) {
    std::vector<int64_t> indexed = d->Ids();  // ascending
    if (d == &state->indexes->vector()) r.indexed = indexed.size();
    std::vector<int64_t> diff;
    std::set_difference(stored.begin(), stored.end(), indexed.begin(), indexed.end(),
                        std::back_inserter(diff));
    r.missing_from_index += diff.size();
    const size_t missing = diff.size();
    diff.clear();
    std::set_difference(indexed.begin(), indexed.end(), stored.begin(), stored.end(),
                        std::back_inserter(diff));
    r.stale_in_index += diff.size();
    if (d == &state->indexes->keyword()) {
      r.keyword_indexed = indexed.size();
      r.keyword_missing = missing;
      r.keyword_stale = diff.size();
    }
  }
  return r;
}

}  // namespace neodb::engine
