#pragma once
// FaultInjector: decides, for tests, which file writes fail and how. Shared
// by FaultInjectionEnv (our files, common/fault_env.h) and the RocksDB file
// system wrapper (db/fault_file_system.h), so one injector numbers and fails
// every write of a data directory in one sequence.
//
// Every write operation (create or open for append, append, sync, rename,
// delete, mkdir, directory sync, truncate) of a path containing `path_filter` counts as one op,
// numbered from 1. A test first runs an operation cleanly to learn how many
// ops it makes (ops()), then reruns it failing op 1, 2, ... n in turn: every
// write point, deterministically.
//
// Thread-safe.

#include <cstdint>
#include <mutex>
#include <string>

#include "absl/status/status.h"

namespace neodb {

enum class FileOp { kCreate, kAppend, kSync, kRename, kDelete, kCreateDir, kSyncDir, kTruncate };

enum class Fault {
  kNone,
  kIoError,     // EIO
  kNoSpace,     // ENOSPC
  kTornRename,  // rename "succeeds" but the target holds only the first half
                // of its bytes: a disk that lost the tail (FaultInjectionEnv
                // only; the RocksDB wrapper fails the rename with EIO)
};

class FaultInjector {
 public:
  // Fail op number `n` (counting from now) with `fault`.
  void FailNth(uint64_t n, Fault fault);
  // Every op from now fails with ENOSPC until SetDiskFull(false): a full disk.
  void SetDiskFull(bool full);
  // Only paths containing `filter` count and fail ("" = all).
  void SetPathFilter(std::string filter);
  // Forget FailNth, disk full and the count.
  void Reset();
  // Ops counted since the last Reset (or FailNth).
  uint64_t ops() const;
  bool disk_full() const;
  // The op the last injected fault hit (kCreate when none).
  FileOp last_injected_op() const;
  std::string last_injected_path() const;
  // Faults injected since the last Reset.
  uint64_t injected() const;

  // For the envs: counts the op and says whether (and how) it must fail.
  Fault Next(FileOp op, const std::string& path);

 private:
  mutable std::mutex mu_;
  std::string filter_;
  uint64_t ops_ = 0;
  uint64_t fail_at_ = 0;  // 0: none
  Fault fail_with_ = Fault::kNone;
  bool disk_full_ = false;
  uint64_t injected_ = 0;
  FileOp last_op_ = FileOp::kCreate;
  std::string last_path_;
};

}  // namespace neodb
