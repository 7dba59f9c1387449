#pragma once
// Database: the service's engine. Owns the Store (RocksDB, the single source
// of truth), one derived VectorIndex per collection with the in-memory
// metadata that filters read, and the serving model (Embedder + batcher).
//
// Write path: validate → embed (batched) → Store::Upsert (one atomic batch
// with change-log records) → apply those records to the index → return. So
// once a write returns, a search sees it. Writes to the store and the index
// are serialised (write_mu_), so the index follows change-log order exactly.
//
// Read path: search the index (metadata filter applied during the search),
// then re-read every hit from the store by internal id: a hit whose version
// was overwritten or deleted meanwhile, or whose vector came from a model
// other than the collection's, is dropped (and the search widened), so stale,
// foreign or mixed-model results are never returned.
//
// Startup: per collection, the newest valid index snapshot plus a replay of
// the change log after the sequence it covers; without one (or when the
// replay finds the log trimmed, or the sizes disagree) a rebuild from the
// store. Snapshots are written periodically, on demand and on Close, and the
// change log is trimmed to what they cover.
//
// Thread-safety: every public method is safe to call concurrently.

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <shared_mutex>
#include <string>
#include <thread>
#include <vector>

#include "absl/time/time.h"
#include "api/embed_batcher.h"
#include "api/embedder.h"
#include "db/filter.h"
#include "db/store.h"
#include "index/vector_index.h"

namespace neodb::api {

// Opens a model directory for Reindex with a new model (EncoderEmbedder in
// the server; fakes in tests).
using EmbedderFactory =
    std::function<absl::StatusOr<std::unique_ptr<Embedder>>(const std::string& model_dir)>;

struct DatabaseOptions {
  // Root directory: store/ (RocksDB) and snapshots/<collection>/ live here.
  std::string data_dir;
  // fsync before acknowledging writes. Default: true.
  bool sync_writes = true;
  // Periodic snapshot of every index when changes happened. Zero: snapshots
  // happen on Snapshot() and Close() only. (The maintenance thread also
  // rebuilds indexes whose tombstones piled up, every 0.5 s, regardless.)
  // Default: 60 s.
  absl::Duration snapshot_interval = absl::Seconds(60);
  // Close() snapshots every index. Tests turn it off to stand in for a crash.
  // Default: true.
  bool snapshot_on_close = true;
  // Snapshots kept per collection. Default: 2.
  int snapshots_kept = 2;
  EmbedBatcherOptions batcher;
  // Required for Reindex with a model directory; may be empty otherwise.
  EmbedderFactory embedder_factory;
};

struct CollectionInfo {
  db::CollectionSpec spec;
  uint64_t count = 0;       // stored documents
  uint64_t index_size = 0;  // searchable vectors
  std::string index_spec;   // canonical, e.g. "HNSW32"
};

struct DocumentInput {
  std::string id;  // empty: generated
  std::string text;
  db::Metadata metadata;
};

struct SearchQuery {
  int k = 10;
  const db::Filter* filter = nullptr;  // not owned; may be null
  bool include_text = false;
  bool include_metadata = false;
};

struct Hit {
  std::string id;
  float score = 0;  // higher is better (index/metric.h)
  std::string text;
  db::Metadata metadata;
};

struct SearchResult {
  std::vector<Hit> hits;
  std::string model_id;
};

struct ReindexProgress {
  enum class State { kIdle, kRunning, kDone, kFailed };
  State state = State::kIdle;
  uint64_t done = 0;
  uint64_t total = 0;
  std::string model_id;  // target
  std::string error;
};

struct VerifyReport {
  uint64_t stored = 0;
  uint64_t indexed = 0;
  uint64_t missing_from_index = 0;
  uint64_t stale_in_index = 0;
  uint64_t foreign_model = 0;
  std::string model_id;
};

struct DatabaseStats {
  std::string model_id;
  int dimension = 0;
  uint64_t collections = 0;
  uint64_t documents = 0;
  uint64_t snapshot_loads = 0;
  uint64_t index_rebuilds = 0;
  uint64_t replayed_changes = 0;
  uint64_t snapshots_written = 0;
  EmbedBatcherStats embed;
};

class Database {
 public:
  // Opens (creating when missing) the database in options.data_dir, serving
  // with `embedder`, and brings every collection's index up to date.
  static absl::StatusOr<std::unique_ptr<Database>> Open(const DatabaseOptions& options,
                                                        std::unique_ptr<Embedder> embedder);
  // Close() unless already closed.
  ~Database();
  Database(const Database&) = delete;
  Database& operator=(const Database&) = delete;

  // Stops background work, snapshots every index, flushes the store.
  // Idempotent; every other method must not be called after it.
  absl::Status Close();

  // --- Collections. `spec.dimension` and `spec.model_id` are taken from the
  // serving model; the index spec is validated against the dimension.
  absl::StatusOr<CollectionInfo> CreateCollection(db::CollectionSpec spec);
  absl::Status DropCollection(const std::string& name);
  absl::StatusOr<CollectionInfo> DescribeCollection(const std::string& name) const;
  absl::StatusOr<std::vector<CollectionInfo>> ListCollections() const;

  // --- Documents. Upsert returns the ids (generated ones filled in) in
  // order; *tokens (optional) receives the tokens embedded. All or nothing.
  absl::StatusOr<std::vector<std::string>> Upsert(const std::string& collection,
                                                  std::vector<DocumentInput> docs,
                                                  absl::Time deadline, int64_t* tokens = nullptr);
  // Returns how many existed.
  absl::StatusOr<uint64_t> Delete(const std::string& collection,
                                  const std::vector<std::string>& ids);
  // NOT_FOUND for an unknown collection; missing documents are nullopt.
  absl::StatusOr<std::vector<std::optional<db::Document>>> Get(
      const std::string& collection, const std::vector<std::string>& ids) const;
  absl::StatusOr<db::ListResult> List(const std::string& collection, const std::string& page_token,
                                      size_t limit) const;

  // --- Search. `instruction` replaces the collection's query prefix.
  absl::StatusOr<SearchResult> NearText(const std::string& collection, const std::string& query,
                                        const std::optional<std::string>& instruction,
                                        const SearchQuery& q, absl::Time deadline) const;
  absl::StatusOr<SearchResult> NearVector(const std::string& collection,
                                          const std::vector<float>& vector,
                                          const SearchQuery& q) const;

  // The encoder as a service (through the batcher).
  absl::StatusOr<std::vector<encoder::Embedding>> Embed(std::vector<std::string> texts,
                                                        const encoder::EmbedOptions& options,
                                                        absl::Time deadline) const;

  // --- Admin.
  // Snapshots every index; returns the change-log sequence covered.
  absl::StatusOr<uint64_t> Snapshot();
  // Starts re-embedding `collection` (with the model in `model_dir` when
  // non-empty) in the background. FAILED_PRECONDITION when one is running.
  absl::Status Reindex(const std::string& collection, const std::string& model_dir);
  absl::StatusOr<ReindexProgress> GetReindexProgress(const std::string& collection) const;
  absl::StatusOr<VerifyReport> Verify(const std::string& collection) const;
  absl::Status Compact();
  DatabaseStats Stats() const;

  // Blocks until no reindex runs (tests).
  void WaitForReindex() const;

 private:
  struct Model;
  struct Collection;
  Database() = default;

  absl::Status Startup();
  absl::Status LoadCollection(const db::CollectionSpec& spec, uint64_t last_seq,
                              std::shared_ptr<Collection>* out, bool* from_snapshot);
  absl::Status RebuildIndex(Collection& c, bool background);
  absl::StatusOr<std::shared_ptr<Collection>> Find(const std::string& name) const;
  std::shared_ptr<Model> model() const;
  std::string SnapshotDir(const std::string& name) const;
  // REQUIRES: write_mu_ held. Applies change-log records after applied_seq_ to
  // the live indexes (vectors and metadata re-read from the store by
  // internal id: fresh writes sit in the memtable, so this is cheap).
  absl::Status CatchUpLocked();
  absl::StatusOr<uint64_t> SnapshotLocked();
  void MaintenanceLoop();
  void ReindexJob(std::shared_ptr<Collection> c, std::string model_dir);
  absl::Status ReindexRun(Collection& c, const std::string& model_dir);

  DatabaseOptions options_;
  std::unique_ptr<db::Store> store_;

  mutable std::mutex model_mu_;
  std::shared_ptr<Model> model_;

  mutable std::shared_mutex collections_mu_;
  std::map<std::string, std::shared_ptr<Collection>> collections_;

  // Serialises store mutations with their index updates; guards the fields below.
  mutable std::mutex write_mu_;
  uint64_t applied_seq_ = 0;
  uint64_t snapshot_seq_ = 0;     // covered by the last full snapshot
  std::multiset<uint64_t> pins_;  // change-log positions still needed (no trim past them)

  std::atomic<uint64_t> snapshot_loads_{0};
  std::atomic<uint64_t> index_rebuilds_{0};
  std::atomic<uint64_t> replayed_changes_{0};
  std::atomic<uint64_t> snapshots_written_{0};

  std::mutex maint_mu_;
  std::condition_variable maint_cv_;
  bool stop_ = false;
  bool closed_ = false;
  bool started_ = false;  // Startup() completed
  std::thread maintenance_;
  mutable std::mutex reindex_mu_;
  mutable std::condition_variable reindex_cv_;
  int reindex_running_ = 0;
  std::vector<std::thread> reindex_threads_;
};

}  // namespace neodb::api
