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
  // Every write acknowledged before this line has a sequence <= covered and
  // is in the checkpoint (which flushes the memtables and copies the WAL).
  BackupManifest m;
  m.covered_seq = store_->LastSequence();
  RETURN_IF_ERROR(store_->CreateCheckpoint((fs::path(dir) / "store").string()));
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
  spdlog::info("backup {}: {} files, {} models, covered sequence {}", dir, m.files.size(),
               m.models.size(), m.covered_seq);
  return m;
}

}  // namespace neodb::engine
