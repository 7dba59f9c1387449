// Database::Backup: an online backup while writes continue (backup.h).
#include <filesystem>
#include <set>

#include "absl/strings/str_cat.h"
#include "engine/database.h"
#include "common/atomic_file.h"
#include "common/status_macros.h"
#include "spdlog/spdlog.h"

namespace neodb::engine {

namespace fs = std::filesystem;

absl::StatusOr<BackupManifest> Database::Backup(const std::string& dir) {
  std::error_code ec;
  if (fs::exists(dir, ec)) {
    return absl::AlreadyExistsError(absl::StrCat("backup directory ", dir, " exists"));
  }
  RETURN_IF_ERROR(env_->CreateDir(dir));
  // A failed backup (a full disk, most likely) is removed, so that it gives
  // back the space it took and is never mistaken for a backup.
  absl::StatusOr<BackupManifest> m = BackupInto(dir);
  if (!m.ok()) env_->DeleteTree(dir).IgnoreError();  // the error that matters is m's
  return m;
}

absl::StatusOr<BackupManifest> Database::BackupInto(const std::string& dir) {
  std::error_code ec;
  // The models the collections name, before and after the checkpoint: a
  // reindex may commit in between, and the backup must carry whichever the
  // checkpoint's specs name.
  std::set<std::pair<std::string, std::string>> models;  // dir, model id
  auto note_models = [&]() -> absl::Status {
    ASSIGN_OR_RETURN(auto specs, store_->ListCollections());
    for (const auto& s : specs) {
      if (!s.model_dir.empty()) models.insert({s.model_dir, s.model_id});
    }
    return absl::OkStatus();
  };
  RETURN_IF_ERROR(note_models());
  BackupManifest m;
  // The index snapshots first, each through the one snapshot writer, each
  // covering the log up to snapshot_seq at least; a pin keeps the records after it in
  // the log (no periodic snapshot trims them) until the checkpoint below has
  // them, so a restore loads the snapshots and replays only those.
  absl::Status snapshots = WriteBackupSnapshots(dir, &m.snapshot_seq);
  absl::Status checkpoint = absl::OkStatus();
  if (snapshots.ok()) {
    // Every write acknowledged before this line has a sequence <= covered and
    // is in the checkpoint (which flushes the memtables and copies the WAL).
    m.covered_seq = store_->LastSequence();
    checkpoint = store_->CreateCheckpoint((fs::path(dir) / "store").string());
  }
  Unpin(m.snapshot_seq);
  RETURN_IF_ERROR(snapshots);
  RETURN_IF_ERROR(checkpoint);
  RETURN_IF_ERROR(note_models());
  int i = 0;
  const std::string models_dir = (fs::path(dir) / "models").string();
  for (const auto& [source, id] : models) {
    // A model that is not a directory (the test fake) has nothing to copy.
    if (!fs::is_directory(source, ec)) continue;
    const std::string rel = absl::StrCat("models/", i++);
    // Through the Env, synced: a copy is whole or the backup fails.
    absl::Status s = env_->CreateDir(models_dir);
    if (s.ok()) s = env_->CopyTree(source, (fs::path(dir) / rel).string());
    if (!s.ok()) {
      return absl::Status(s.code(), absl::StrCat("copying model ", source, ": ", s.message()));
    }
    m.models.push_back({source, rel, id});
  }
  if (i > 0) RETURN_IF_ERROR(env_->SyncDir(models_dir));
  ASSIGN_OR_RETURN(m.files, DescribeFiles(dir));
  // The manifest last, by an atomic (synced, renamed) write: a backup
  // without one is incomplete.
  const std::string manifest = (fs::path(dir) / "manifest.json").string();
  RETURN_IF_ERROR(WriteFileAtomically(env_, manifest, {ManifestToJson(m)}));
  spdlog::info("backup {}: {} files, {} models, covered sequence {}, snapshots at {}", dir,
               m.files.size(), m.models.size(), m.covered_seq, m.snapshot_seq);
  return m;
}

absl::Status Database::WriteBackupSnapshots(const std::string& dir, uint64_t* covered) {
  // Each collection under its own write lock, as every snapshot is: its
  // indexes hold exactly its part of the log up to the position read there,
  // at least the pin (its writes wait meanwhile; the others' go on). The pin
  // is taken even on failure; the caller drops it.
  *covered = Pin();
  const fs::path root = fs::path(dir) / "snapshots";
  for (const auto& c : AllCollections()) {
    RETURN_IF_ERROR(SnapshotCollection(*c, (root / c->name()).string(), /*keep=*/1));
  }
  return absl::OkStatus();
}

}  // namespace neodb::engine
