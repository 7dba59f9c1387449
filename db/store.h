#pragma once
// Store: the durable single source of truth (RocksDB). Holds collection specs,
// documents (text, metadata, vector, model id), the internal-id map and the
// change log. The vector index (index/) is derived from it and rebuildable.
//
// Layout (column families):
//   collections  name                      -> CollectionSpec (codec)
//   documents    name \0 doc_id            -> Document (codec)
//   id_map       name \0 be64(internal_id) -> doc_id   (live versions only)
//   changelog    be64(seq)                 -> ChangelogRecord (codec)
//   meta         "next_internal_id", "last_seq", "count/<name>" -> be64
//
// Full disk: a write that finds no space fails with RESOURCE_EXHAUSTED and
// is not applied (if only its WAL fsync failed, its record may be in the
// file and a restart may replay it: a failed write's outcome is unknown,
// never an acknowledged write's); reads keep working; the first write after space
// returns resumes RocksDB (store.cc, "Disk full, design"). A store that
// cannot be opened for writing because its disk is full (opening writes a
// MANIFEST, an OPTIONS file, a new WAL and flushes the replayed one) opens
// read-only instead: every acknowledged write is readable (the WAL is
// replayed into memory), every mutation is RESOURCE_EXHAUSTED naming the
// data directory, and the first mutation or TryResumeWrites() after space
// returns reopens it writable, without a restart. Other I/O errors
// are UNAVAILABLE; one RocksDB deems fatal (a failed MANIFEST write) keeps
// writes off until the store is reopened, nothing acknowledged lost.
//
// Thread-safety: every method is safe to call concurrently. Mutations
// (collection create/drop/update, Upsert, Delete, TrimChangelog) are
// serialised by one mutex, so internal-id allocation and change-log order equal
// commit order; reads go straight to RocksDB and never block on writers.

#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "db/changelog_record.h"
#include "db/collection_spec.h"
#include "db/document.h"

namespace rocksdb {
class DB;
class ColumnFamilyHandle;
}  // namespace rocksdb

namespace neodb {
class FaultInjector;
}  // namespace neodb

namespace neodb::db {

struct StoreOptions {
  // Create the database when `path` holds none. Default: true.
  bool create_if_missing = true;
  // fsync the WAL before a mutation returns, so an acknowledged write survives
  // a power loss (not only a process crash). Default: true.
  bool sync_writes = true;
  // RocksDB block cache size in bytes, one cache shared by every column family
  // (it holds SST blocks read back; fixed for the store's life). Default: 64 MiB.
  size_t block_cache_bytes = 64 << 20;
  // Memory for memtables, every column family together (RocksDB's
  // db_write_buffer_size, a WriteBufferManager): past it RocksDB flushes the
  // largest memtable early; writes are never stalled for it. Each column
  // family's memtable is also flushed when it reaches a quarter of it
  // (write_buffer_size). Up to one more memtable per column family may be in
  // flight to disk, so the peak is about twice this. Zero: RocksDB's own
  // defaults (64 MiB per memtable, no total: up to 768 MiB over our six column
  // families, which a stream of overwrites reaches; bench/README.md,
  // "Resident memory under many requests"). It also bounds the write-ahead log
  // on disk at twice this (RocksDB's max_total_wal_size; zero: RocksDB's own
  // bound). Default: 32 MiB.
  size_t memtable_bytes = 32 << 20;
  // Tests only: RocksDB's file writes ask this injector first
  // (db/fault_file_system.h). Not owned; must outlive the store. Default: none.
  FaultInjector* test_faults = nullptr;
};

// Where a write comes from when it replays another log (a shard's stream in a
// cluster): the log's name and the position of the write's last change in
// it. Kept in the same atomic batch as the write, so a restart resumes right
// after the last change the store kept: none applied twice, none skipped.
struct SourcePosition {
  std::string source;  // 1..256 bytes
  uint64_t position = 0;
};

// Fields of a collection that may change after creation.
struct CollectionUpdate {
  std::optional<std::string> model_id;
  std::optional<std::string> model_dir;
  std::optional<std::string> previous_model_dir;
  std::optional<std::string> engine_state;
  std::optional<std::string> index_spec;
  std::optional<std::string> pooling;
  std::optional<std::string> query_instruction;
  std::optional<std::string> document_instruction;
  std::optional<std::string> precision;
  std::optional<std::string> fusion;
  std::optional<double> fusion_alpha;
};

struct ListResult {
  std::vector<Document> documents;
  // Opaque; pass back to List for the next page. Empty when this was the last page.
  std::string next_page_token;
};

class Store {
 public:
  // Opens (or creates) the store at `path`; read-only when the disk is too
  // full to open it for writing (above), if it already exists.
  static absl::StatusOr<std::unique_ptr<Store>> Open(const std::string& path,
                                                     const StoreOptions& options = {});
  ~Store();
  Store(const Store&) = delete;
  Store& operator=(const Store&) = delete;

  // --- Whether writes are taken ----------------------------------------------
  // OK while mutations are taken; else why not: RESOURCE_EXHAUSTED naming
  // the data directory's disk for a store read-only since it opened on a
  // full disk, or the I/O error that stopped RocksDB's writes (a full disk
  // mid-run). Cheap (a statvfs when read-only); never writes.
  absl::Status WriteState() const;
  // A read-only store reopens writable when its disk has room (the
  // mutations do the same first thing); OK when it is writable. A store
  // whose writes stopped mid-run resumes on its next mutation, not here.
  // Cheap when writable or when the disk is still full (a statvfs).
  absl::Status TryReopenWritable();
  // Opened read-only and not reopened writable yet.
  bool read_only() const;

  // --- Collections ---------------------------------------------------------
  // ALREADY_EXISTS if the name is taken; INVALID_ARGUMENT for a bad spec.
  // Sets created_at_micros when it is 0. Appends a kCreateCollection record.
  absl::Status CreateCollection(const CollectionSpec& spec);
  // Deletes the collection, all its documents and id-map entries in one atomic
  // batch (range deletes) and appends a kDropCollection record. NOT_FOUND if absent.
  absl::Status DropCollection(std::string_view name);
  absl::StatusOr<CollectionSpec> GetCollection(std::string_view name) const;
  // All collections ordered by name.
  absl::StatusOr<std::vector<CollectionSpec>> ListCollections() const;
  // Applies the set fields of `update`; returns the new spec.
  absl::StatusOr<CollectionSpec> UpdateCollection(std::string_view name,
                                                  const CollectionUpdate& update);
  // Live documents in the collection. O(1) (a counter kept in the same batches).
  absl::StatusOr<uint64_t> Count(std::string_view name) const;

  // --- Documents -----------------------------------------------------------
  // Writes `docs` (insert or overwrite by id). Each written document gets a new
  // internal id (input internal_id is ignored), replacing the previous
  // version's id-map entry. Data, id map, counters and one kUpsert change-log
  // record per document go in ONE atomic WriteBatch. Returns the change-log
  // sequence number of each document, in input order. A repeated id within
  // `docs` behaves as sequential writes (the last one wins).
  // Errors (nothing is written): NOT_FOUND unknown collection; INVALID_ARGUMENT
  // for an empty/oversized id, vector size != dimension, non-finite vector
  // value, or bad metadata (message names the document).
  // With `from`, the batch also records from->position as the collection's
  // position in from->source (SourcePositionOf), even when `docs` is empty.
  absl::StatusOr<std::vector<uint64_t>> Upsert(std::string_view collection,
                                               std::vector<Document> docs,
                                               const SourcePosition* from = nullptr);
  // Deletes `ids`; missing ids are skipped (no record). Returns the change-log
  // sequence numbers of the deletes that happened, in input order. `from` as
  // for Upsert (recorded even when no id was there to delete).
  absl::StatusOr<std::vector<uint64_t>> Delete(std::string_view collection,
                                               std::span<const std::string> ids,
                                               const SourcePosition* from = nullptr);
  // The position last recorded for `collection` from `source` by Upsert or
  // Delete; 0 when none (dropping the collection forgets its positions).
  absl::StatusOr<uint64_t> SourcePositionOf(std::string_view collection,
                                            std::string_view source) const;
  // NOT_FOUND when the collection or the document is absent.
  absl::StatusOr<Document> Get(std::string_view collection, std::string_view id) const;
  // The live document whose current version has `internal_id`; NOT_FOUND when
  // that version was overwritten or deleted (so stale index hits are detectable).
  absl::StatusOr<Document> GetByInternalId(std::string_view collection, uint64_t internal_id) const;
  // One page of documents in id (byte) order. `limit` in 1..10000 (0 = 100).
  // INVALID_ARGUMENT for a malformed page token. Non-empty `id_prefix`: only
  // the documents whose id starts with it (a tenant's), whatever the token
  // says.
  absl::StatusOr<ListResult> List(std::string_view collection, std::string_view page_token,
                                  size_t limit, std::string_view id_prefix = {}) const;
  // Calls `fn` for every document of the collection in id (byte) order, over a
  // consistent RocksDB snapshot. When `covered_seq` is non-null it receives the
  // last change-log sequence that the snapshot includes (replay from
  // *covered_seq + 1 to catch up). Stops at and returns fn's first error.
  absl::Status ScanDocuments(std::string_view collection,
                             const std::function<absl::Status(const Document&)>& fn,
                             uint64_t* covered_seq = nullptr) const;

  // --- Change log ----------------------------------------------------------
  // Calls `fn` for every retained record with seq >= from_seq, in order.
  absl::Status ReadChangelog(uint64_t from_seq,
                             const std::function<absl::Status(const ChangelogRecord&)>& fn) const;
  // Sequence of the last committed record (0 when none ever).
  uint64_t LastSequence() const;
  // Removes records with seq <= up_to_seq (e.g. once an index snapshot covers them).
  absl::Status TrimChangelog(uint64_t up_to_seq);

  // --- Maintenance ---------------------------------------------------------
  // A consistent, openable copy of the whole store at `dir` (rocksdb::Checkpoint:
  // hard links where possible). `dir` must not exist. Refused while writes
  // are (WriteState()). Compact too; Flush is a no-op on a read-only store.
  absl::Status CreateCheckpoint(const std::string& dir) const;
  // Full manual compaction of every column family.
  absl::Status Compact();
  // Flushes memtables (used before a snapshot or on shutdown).
  absl::Status Flush();
  // A RocksDB integer property summed over every column family
  // ("rocksdb.estimate-num-keys", "rocksdb.total-sst-files-size", ...); the
  // block cache's ("rocksdb.block-cache-usage", ...) once, as the column
  // families share the cache.
  // NOT_FOUND when RocksDB does not know `name`.
  absl::StatusOr<uint64_t> IntProperty(const std::string& name) const;

 private:
  struct Impl;
  explicit Store(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace neodb::db
