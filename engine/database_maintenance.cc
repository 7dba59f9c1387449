// Database: snapshots and the maintenance thread (periodic snapshots,
// rebuilds of indexes that ask for one). Verify: database_verify.cc.
#include <algorithm>
#include <filesystem>

#include "engine/database.h"
#include "common/status_macros.h"
#include "spdlog/spdlog.h"

namespace neodb::engine {

absl::StatusOr<uint64_t> Database::Snapshot() {
  std::lock_guard<std::mutex> lock(snapshot_mu_);
  const bool pause = pausing_env_ != nullptr && !snapshot_pause_used_;
  if (pause) {
    snapshot_pause_used_ = true;
    pausing_env_->PauseAt(options_.test_snapshot_pause_at, options_.test_pause);
  }
  absl::StatusOr<uint64_t> covered = SnapshotAll();
  if (pause) pausing_env_->Disarm();
  return covered;
}

absl::StatusOr<uint64_t> Database::SnapshotAll() {
  // Each collection's snapshot covers LastSequence() as read under its own
  // write lock, at least `covered` (database.h, "The change-log watermark").
  // Writes to the others go on meanwhile.
  const uint64_t covered = store_->LastSequence();
  for (const auto& c : AllCollections()) {
    RETURN_IF_ERROR(SnapshotCollection(*c, SnapshotDir(c->name()), options_.snapshots_kept));
    ++snapshots_written_;
  }
  std::lock_guard<std::mutex> lock(log_mu_);
  snapshot_seq_ = covered;
  uint64_t trim = covered;
  if (!pins_.empty()) trim = std::min(trim, *pins_.begin());
  if (trim > 0) RETURN_IF_ERROR(store_->TrimChangelog(trim));
  return covered;
}

absl::Status Database::SnapshotCollection(Collection& c, const std::string& dir, int keep) {
  std::lock_guard<std::mutex> lock(c.write_mu());
  if (c.dropped) return absl::OkStatus();  // nothing of it may be written again
  return c.SaveSnapshot(env_, dir, store_->LastSequence(), keep);
}

uint64_t Database::Pin() {
  std::lock_guard<std::mutex> lock(log_mu_);
  // No trim goes past it: one that ran before trimmed to a position it read
  // earlier (<= LastSequence() now), one that runs later sees the pin.
  const uint64_t pin = store_->LastSequence();
  pins_.insert(pin);
  return pin;
}

void Database::Unpin(uint64_t pin) {
  std::lock_guard<std::mutex> lock(log_mu_);
  pins_.erase(pins_.find(pin));
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
        std::lock_guard<std::mutex> wl(c->write_mu());
        if (c->dropped) continue;
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
        std::lock_guard<std::mutex> l(log_mu_);
        changed = store_->LastSequence() > snapshot_seq_;
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
