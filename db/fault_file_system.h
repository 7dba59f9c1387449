#pragma once
// A RocksDB FileSystem that forwards to the default one but asks a
// FaultInjector (common/fault_injector.h) before each write: file creation,
// append, sync/fsync, rename, delete, directory creation and sync. So the
// same injector that fails our snapshot writes (FaultInjectionEnv) fails
// RocksDB's WAL, SST, MANIFEST and CURRENT writes, numbered in one sequence.
// Tests only (StoreOptions::test_faults).

#include <memory>

#include "common/fault_injector.h"
#include "rocksdb/file_system.h"

namespace neodb::db {

// `faults` is not owned and must outlive the returned file system.
std::shared_ptr<rocksdb::FileSystem> NewFaultFileSystem(FaultInjector* faults);

}  // namespace neodb::db
