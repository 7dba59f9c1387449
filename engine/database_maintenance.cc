// Database: snapshots and the maintenance thread (periodic snapshots,
// rebuilds of indexes that ask for one). Verify: database_verify.cc.
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

}  // namespace neodb::engine
