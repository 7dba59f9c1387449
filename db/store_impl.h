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
#include "rocksdb/options.h"
#include "rocksdb/write_batch.h"

namespace neodb::db {

// One open RocksDB instance and its column families. A store that started
// on a full disk holds a read-only one (DB::OpenForReadOnly: it replays the
// WAL into memory and writes nothing) until space returns; then a writable
// one replaces it whole (Impl::ReopenWritable). Readers hold a shared_ptr
// for the length of one call, so the read-only instance closes when the
// last reader that took it is done.
struct Rocks {
  ~Rocks();
  bool read_only = false;
  std::unique_ptr<rocksdb::DB> db;
  std::vector<rocksdb::ColumnFamilyHandle*> handles;  // owned; destroyed before db
  rocksdb::ColumnFamilyHandle* collections = nullptr;
  rocksdb::ColumnFamilyHandle* documents = nullptr;
  rocksdb::ColumnFamilyHandle* id_map = nullptr;
  rocksdb::ColumnFamilyHandle* changelog = nullptr;
  rocksdb::ColumnFamilyHandle* meta = nullptr;
};

struct Store::Impl {
  StoreOptions options;
  std::string path;
  // What every open uses (the writable reopen included).
  rocksdb::Options db_options;
  std::vector<rocksdb::ColumnFamilyDescriptor> descriptors;
  // The rocksdb::Env over a fault-injecting file system (tests); declared
  // before rocks so that it outlives it. Null: RocksDB's default.
  std::unique_ptr<rocksdb::Env> env;
  // Set when RocksDB stopped accepting writes after an I/O error (a full
  // disk): its WAL or a flush failed. Writes then call Resume first; see
  // ResumeIfStopped.
  std::shared_ptr<std::atomic<bool>> stopped = std::make_shared<std::atomic<bool>>(false);
  // The instance in use; swapped (under write_mu) only from read-only to
  // writable. Take it once per call with current().
  std::atomic<std::shared_ptr<Rocks>> rocks;
  std::shared_ptr<Rocks> current() const { return rocks.load(); }

  // Why writes are refused: the read-only open's reason, or the last write's
  // I/O error while `stopped`. Guarded by reason_mu.
  mutable std::mutex reason_mu;
  absl::Status refused_because;

  // Serialises every mutation: internal-id allocation and change-log sequence
  // numbers are assigned under it, so log order == commit order.
  std::mutex write_mu;
  // Guarded by write_mu for writes; read lock-free.
  std::atomic<uint64_t> last_seq{0};
  uint64_t next_internal_id = 1;  // guarded by write_mu

  // Called first by every mutation, under write_mu. A read-only store (it
  // started on a full disk) reopens writable when the disk has room
  // (ReopenWritable), else refuses with RESOURCE_EXHAUSTED naming the data
  // directory's disk. When RocksDB stopped
  // after an error, tries DB::Resume(): it flushes the memtables (so the
  // possibly torn WAL is no longer needed) and re-enables writes, or fails
  // again while the disk is still full, with that error
  // (RESOURCE_EXHAUSTED for no space). Reads never call it: they work
  // throughout.
  absl::Status ResumeIfStopped();
  // REQUIRES: write_mu held, the current instance read-only. Opens the store
  // writable when the disk has room for the WAL replay's flush plus a
  // margin, and swaps it in; else the read-only reason with the numbers.
  absl::Status ReopenWritable();
  // Opens the store at `path` with db_options and descriptors.
  absl::StatusOr<std::shared_ptr<Rocks>> OpenRocks(bool read_only) const;
  // Free bytes on the data directory's disk (as the file system says; the
  // fault file system says 0 while its disk is "full"); max when unknown.
  uint64_t FreeBytes() const;
  void SetRefusedBecause(absl::Status s) {
    std::lock_guard<std::mutex> lock(reason_mu);
    refused_because = std::move(s);
  }

  // Writes `batch` (WriteOpts); an I/O error also marks the store stopped,
  // in case RocksDB did not report it as a background error.
  absl::Status Commit(const Rocks& r, rocksdb::WriteBatch* batch, std::string_view context);

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
