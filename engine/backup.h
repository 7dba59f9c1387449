#pragma once
// Online backup and offline restore of a data directory.
//
// A backup directory holds
//   store/          a RocksDB checkpoint of the whole store (consistent: one
//                   point in the change log, taken while writes continue)
//   snapshots/<c>/  each collection's index snapshots (index/snapshot.h and
//                   the keyword index's, the files a data directory keeps),
//                   each covering the change log up to snapshot_seq at least
//                   (each collection's up to where it stood when its own
//                   were written), written just before the checkpoint
//                   (snapshot_seq <= covered_seq)
//   models/<i>/     the checkpoint files of every model a collection uses
//   manifest.json   written last: {"format": "neodb-backup", "version": 1,
//                   "covered_seq": N, "snapshot_seq": S, "files": [{"path",
//                   "size", "sha256"}], "models": [{"source", "dir", "model_id"}]}
// Every file, snapshots included, is checksummed in the manifest. A restore
// puts the snapshots where a data directory keeps them, and the first start
// treats them as after any restart: a snapshot loads only when it matches
// its collection (model, index spec, a position no later than the restored
// log's end) and the log after its position is whole in the restored store,
// and the start replays that log; otherwise (a backup made before snapshots
// were carried, a snapshot that does not fit) that index is rebuilt from the
// store, as every index was before. A directory without manifest.json is not
// a backup.

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "common/env.h"
#include "common/fault_injector.h"

namespace neodb::engine {

inline constexpr int kBackupFormatVersion = 1;

struct BackupFile {
  std::string path;  // relative to the backup directory, '/'-separated
  uint64_t size = 0;
  std::string sha256;  // lowercase hex
};

struct BackupModel {
  std::string source;  // the model directory the collections name
  std::string dir;     // its copy, relative ("models/0")
  std::string model_id;
};

struct BackupManifest {
  int version = kBackupFormatVersion;
  uint64_t covered_seq = 0;  // every change up to here is in store/
  // The position every snapshot under snapshots/ covers (each may cover
  // more); 0 when the backup carries none (older backups). Never past
  // covered_seq.
  uint64_t snapshot_seq = 0;
  std::vector<BackupFile> files;
  std::vector<BackupModel> models;
};

// Lowercase hex SHA-256 of the file at `path`, read through env.
absl::StatusOr<std::string> FileSha256(const std::string& path, Env* env = Env::Default());

// Lists every regular file under `root` with size and checksum (paths
// relative, sorted), listed and read through env. Symlinks and other
// non-regular files: FAILED_PRECONDITION.
absl::StatusOr<std::vector<BackupFile>> DescribeFiles(const std::string& root,
                                                      Env* env = Env::Default());

std::string ManifestToJson(const BackupManifest& m);
// INVALID_ARGUMENT / DATA_LOSS for anything malformed: unknown format or
// version, paths that are absolute or contain "..", missing fields.
absl::StatusOr<BackupManifest> ManifestFromJson(const std::string& text);

// Reads `from`/manifest.json and checks every file it lists against its size
// and checksum, all read through env. DATA_LOSS naming the first file that
// differs or is missing.
absl::StatusOr<BackupManifest> VerifyBackup(const std::string& from, Env* env = Env::Default());

struct RestoreOptions {
  // The file layer of every write of the restore (common/env.h). Not owned.
  // Default (null): Env::Default().
  Env* env = nullptr;
  // Tests only: the writes of the restored store, which restore opens to
  // point collections at their model copies, ask this injector first
  // (db/fault_file_system.h); pass the one behind `env`'s twin. Not owned.
  // Default: none.
  FaultInjector* test_faults = nullptr;
};

// Offline: verifies the backup at `from` completely, then builds a data
// directory at `data_dir` (which must not exist) through a temporary
// directory beside it, every file and directory synced, renamed into place
// at the end (and that rename synced). Collections that named a model the
// backup carries are pointed at its restored copy (<data_dir>/models/<i>).
// On any failure the error is returned and nothing is left at `data_dir` or
// beside it (the temporary directory is removed, through the Env too).
absl::Status RestoreBackup(const std::string& from, const std::string& data_dir,
                           const RestoreOptions& options = {});

}  // namespace neodb::engine
