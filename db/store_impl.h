#pragma once
// Internal to db/: Store's state and key helpers, shared by store.cc (open,
// collections, maintenance) and store_documents.cc (documents, change log).

#include <atomic>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "db/store.h"
#include "rocksdb/db.h"
#include "rocksdb/write_batch.h"

namespace neodb::db {

struct Store::Impl {
  StoreOptions options;
  // The rocksdb::Env over a fault-injecting file system (tests); declared
  // before db so that it outlives it. Null: RocksDB's default.
  std::unique_ptr<rocksdb::Env> env;
  // Set when RocksDB stopped accepting writes after an I/O error (a full
  // disk): its WAL or a flush failed. Writes then call Resume first; see
  // ResumeIfStopped.
  std::shared_ptr<std::atomic<bool>> stopped = std::make_shared<std::atomic<bool>>(false);
  std::unique_ptr<rocksdb::DB> db;
  std::vector<rocksdb::ColumnFamilyHandle*> handles;  // owned; destroyed before db
  rocksdb::ColumnFamilyHandle* collections = nullptr;
  rocksdb::ColumnFamilyHandle* documents = nullptr;
  rocksdb::ColumnFamilyHandle* id_map = nullptr;
  rocksdb::ColumnFamilyHandle* changelog = nullptr;
  rocksdb::ColumnFamilyHandle* meta = nullptr;

  // Serialises every mutation: internal-id allocation and change-log sequence
  // numbers are assigned under it, so log order == commit order.
  std::mutex write_mu;
  // Guarded by write_mu for writes; read lock-free.
  std::atomic<uint64_t> last_seq{0};
  uint64_t next_internal_id = 1;  // guarded by write_mu

  // Called first by every mutation, under write_mu. When RocksDB stopped
  // after an error, tries DB::Resume(): it flushes the memtables (so the
  // possibly torn WAL is no longer needed) and re-enables writes, or fails
  // again while the disk is still full, with that error
  // (RESOURCE_EXHAUSTED for no space). Reads never call it: they work
  // throughout.
  absl::Status ResumeIfStopped();

  // Writes `batch` (WriteOpts); an I/O error also marks the store stopped,
  // in case RocksDB did not report it as a background error.
  absl::Status Commit(rocksdb::WriteBatch* batch, std::string_view context);

  rocksdb::WriteOptions WriteOpts() const {
    rocksdb::WriteOptions w;
    w.sync = options.sync_writes;
    return w;
  }
};

// name \0 : every key of one collection in documents / id_map starts with it.
inline std::string CollectionPrefix(std::string_view name) {
  std::string p(name);
  p.push_back('\0');
  return p;
}
// Exclusive upper bound of CollectionPrefix(name) (names never contain \0 or \1).
inline std::string CollectionPrefixEnd(std::string_view name) {
  std::string p(name);
  p.push_back('\1');
  return p;
}
inline std::string CountKey(std::string_view name) { return "count/" + std::string(name); }
// Where a collection's replicated writes stand in each source log
// (store.h, SourcePosition): "source/" name \0 source -> be64 position.
inline std::string SourceKey(std::string_view name, std::string_view source) {
  return "source/" + CollectionPrefix(name) + std::string(source);
}

inline constexpr char kLastSeqKey[] = "last_seq";
inline constexpr char kNextInternalIdKey[] = "next_internal_id";

// rocksdb::Status -> absl::Status with the same meaning.
absl::Status FromRocks(const rocksdb::Status& s, std::string_view context);

}  // namespace neodb::db
