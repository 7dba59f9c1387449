#pragma once
// Env: every file write of the data directory (index and keyword snapshots,
// atomic files, backups and the model copies they hold, restores), and every
// file read (below), goes through this interface, after LevelDB's
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
// Reads go through it too: every file the project reads (configs, tokenizer
// and checkpoint files, key files, backup manifests, snapshots, training
// inputs) is opened with NewSequentialFile, mostly by ReadFileToString below
// or a LineReader (common/line_reader.h), so a test can serve them all from
// the memory Env (common/env_memory.h) with no file on disk. The twins count
// and fail writes only: a read fault is not what they inject, and a read
// never fills a disk. What stays direct, and why:
//   - safetensors weights (encoder/checkpoint/safetensors.cc) are mapped
//     with mmap(2), not read: a checkpoint of hundreds of MB whose tensors
//     point into a private (copy-on-write) mapping, so loading copies
//     nothing. An Env has no mapping call, and one that the memory Env could
//     only fake by copying would hide that difference, so this one open
//     stays on the real file system;
//   - /proc/self (statm, exe) describes the process, not the project's data;
//   - RocksDB reads through its own file layer (db/fault_file_system.h).
//
// Thread-safety: an Env is safe to use from many threads; one WritableFile
// or SequentialFile is used by one thread at a time.

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

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

class SequentialFile {
 public:
  virtual ~SequentialFile() = default;
  // Up to `n` bytes into `scratch`; returns how many (0 only at the end).
  virtual absl::StatusOr<size_t> Read(size_t n, char* scratch) = 0;
};

// What a path names. kOther: anything else (a socket, a device; a symlink
// when not followed).
enum class FileKind { kFile, kDirectory, kOther };

class Env {
 public:
  virtual ~Env() = default;
  // The POSIX Env. Never deleted.
  static Env* Default();

  // Creates (truncating) `path` for writing.
  virtual absl::StatusOr<std::unique_ptr<WritableFile>> NewWritableFile(
      const std::string& path) = 0;
  // Opens `path` for appending, creating it empty when absent: every Append
  // lands at the file's end (O_APPEND), even after a TruncateFile. For logs
  // and journals that grow a record at a time.
  virtual absl::StatusOr<std::unique_ptr<WritableFile>> NewAppendableFile(
      const std::string& path) = 0;
  // truncate(2): `path` cut (or zero-extended) to `size` bytes. Not durable
  // until a Sync of a file open on it.
  virtual absl::Status TruncateFile(const std::string& path, uint64_t size) = 0;
  // Reads `path` from its start. NOT_FOUND when absent.
  virtual absl::StatusOr<std::unique_ptr<SequentialFile>> NewSequentialFile(
      const std::string& path) = 0;
  // The names (not paths) in directory `dir`, sorted, without "." and "..".
  virtual absl::StatusOr<std::vector<std::string>> GetChildren(const std::string& dir) = 0;
  // stat(2) (`follow_symlinks`) or lstat(2). NOT_FOUND when absent.
  virtual absl::StatusOr<FileKind> GetFileKind(const std::string& path,
                                               bool follow_symlinks = true) = 0;
  virtual absl::StatusOr<uint64_t> GetFileSize(const std::string& path) = 0;
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
  // Copies `from` to `to` (created, truncated) through NewSequentialFile and
  // NewWritableFile, and syncs it. Backups use it.
  absl::Status CopyFile(const std::string& from, const std::string& to);

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

// The whole of `path`, read through env.
absl::StatusOr<std::string> ReadFileToString(Env* env, const std::string& path);

// As above for a file someone else hands us (a config, a key file, a
// manifest), which must be a regular file of at most `max_bytes`: checked
// before anything is read, and while reading (a file that grows is cut off
// all the same: "<path> grew past the limit"), so a hostile one cannot make
// us allocate more.
// NOT_FOUND "<path> does not exist"; INVALID_ARGUMENT "<path> is not a
// regular file" or "<path> is N bytes, more than the limit of M".
absl::StatusOr<std::string> ReadFileToString(Env* env, const std::string& path,
                                             uint64_t max_bytes);

// Whether `path` exists (following symlinks); an error reading it counts as no.
bool FileExists(Env* env, const std::string& path);

// errno -> Status per the rule above: "<what> <path>: <strerror>".
absl::Status ErrnoStatus(int err, std::string_view what, const std::string& path);

}  // namespace neodb
