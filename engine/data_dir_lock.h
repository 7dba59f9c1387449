#pragma once
// DataDirLock: one process per data directory. An exclusive, non-blocking
// flock on <data_dir>/neodb.pid, which also records the holder's pid, so a
// second server says who holds the directory instead of reaching RocksDB's
// own LOCK (whose error names neither). The lock dies with the process, kill
// -9 included, so a stale file never blocks a restart.

#include <memory>
#include <string>

#include "absl/status/statusor.h"

namespace neodb::engine {

class DataDirLock {
 public:
  // FAILED_PRECONDITION "data directory DIR is in use by another neodb
  // process (pid N)" when another process holds it.
  static absl::StatusOr<std::unique_ptr<DataDirLock>> Acquire(const std::string& data_dir);
  ~DataDirLock();
  DataDirLock(const DataDirLock&) = delete;
  DataDirLock& operator=(const DataDirLock&) = delete;

 private:
  explicit DataDirLock(int fd) : fd_(fd) {}
  int fd_;
};

}  // namespace neodb::engine
