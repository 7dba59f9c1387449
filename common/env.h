#pragma once
// Env: every file write of the data directory (index and keyword snapshots,
// atomic files, backups and the model copies they hold, restores) goes
// through this interface, after LevelDB's
// include/leveldb/env.h. Production uses Env::Default() (POSIX); tests wrap
// it in FaultInjectionEnv (common/fault_env.h) to make any one write fail
// deterministically, in process. RocksDB has its own file layer; db/ wraps it
// with the same FaultInjector (db/fault_file_system.h), so one injector
// reaches every write.
//
// Errors: RESOURCE_EXHAUSTED for a full disk or quota (ENOSPC, EDQUOT), so
// the client learns the write failed for want of space; NOT_FOUND for a
// missing file; UNAVAILABLE for other I/O errors. Messages name the path.
//
// Reads stay with the callers (std::ifstream, ::read): a read fault is not
// what these tests inject, and a read never fills a disk.
//
// Thread-safety: an Env is safe to use from many threads; one WritableFile
// is used by one thread at a time.

#include <memory>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace neodb {

class WritableFile {
 public:
  virtual ~WritableFile() = default;  // closes, ignoring errors, if not closed
  virtual absl::Status Append(std::string_view data) = 0;
  // Data and metadata durable (fsync).
  virtual absl::Status Sync() = 0;
  // REQUIRES: called at most once; nothing after it.
  virtual absl::Status Close() = 0;
};

class Env {
 public:
  virtual ~Env() = default;
  // The POSIX Env. Never deleted.
  static Env* Default();

  // Creates (truncating) `path` for writing.
  virtual absl::StatusOr<std::unique_ptr<WritableFile>> NewWritableFile(
      const std::string& path) = 0;
  // rename(2): atomically replaces `to`.
  virtual absl::Status RenameFile(const std::string& from, const std::string& to) = 0;
  // NOT_FOUND when absent.
  virtual absl::Status DeleteFile(const std::string& path) = 0;
  // rmdir(2) of an empty directory. NOT_FOUND when absent.
  virtual absl::Status DeleteDir(const std::string& path) = 0;
  // `path` and its missing parents; OK when it exists as a directory.
  virtual absl::Status CreateDir(const std::string& path) = 0;
  // fsync of a directory: makes its entries (a rename) durable.
  virtual absl::Status SyncDir(const std::string& path) = 0;
  // Copies `from` to `to` (created, truncated) through NewWritableFile, and
  // syncs it. Backups use it.
  virtual absl::Status CopyFile(const std::string& from, const std::string& to);

  // The directory tree `from` copied to `to` (which it creates) through
  // CreateDir, CopyFile and SyncDir: every file and directory durable when
  // it returns OK. Symlinks are followed; anything but files and
  // directories (a socket) is FAILED_PRECONDITION. On error `to` may hold
  // part of the tree; the caller removes it (DeleteTree). Model copies use it.
  absl::Status CopyTree(const std::string& from, const std::string& to);
  // Removes `path` and everything under it through DeleteFile and DeleteDir
  // (deepest first). OK when it does not exist.
  absl::Status DeleteTree(const std::string& path);
};

// errno -> Status per the rule above: "<what> <path>: <strerror>".
absl::Status ErrnoStatus(int err, std::string_view what, const std::string& path);

}  // namespace neodb
