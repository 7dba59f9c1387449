#pragma once
// Database: the engine. Owns the Store (RocksDB, the single source of truth),
// the collections (each with its settings, its model and its derived indexes:
// collection.h, index_set.h) and the registry of loaded models
// (model_registry.h). The transport (api/) calls it with engine types only.
//
// Write path: validate -> embed with the collection's model (batched) ->
// Store::Upsert (one atomic batch with change-log records) -> apply those
// records to the indexes (change_replay.h) -> return. So once a write
// returns, a search sees it. A collection's store writes and its index
// updates are serialised by its own write lock (Collection::write_mu()), so
// its indexes follow the change-log order of its records exactly, while
// writes to other collections go on (the store orders their commits into the
// one database-wide log).
//
// Read path: take the collection's state once (settings, model, indexes),
// embed the query with that model, search those indexes (the metadata filter
// applied during the search), then re-read every hit from the store by
// internal id: a hit whose version was overwritten or deleted meanwhile, or
// whose vector came from another model, is dropped (and the search widened).
//
// Models: each collection records the checkpoint directory and content hash
// of its model. The registry loads a model on first use, shares it between
// collections on the same checkpoint, and keeps their memory under a cap.
// Reindex moves one collection to another model; that is persisted with it.
//
// Startup: per collection, each derived index's newest valid snapshot plus a
// replay of the change log after the sequence it covers; without one (or when
// the log was trimmed past it, or the sizes disagree) a rebuild from the
// store. Snapshots are written periodically, on demand and on Close, and the
// change log is trimmed to what they cover.
//
// One process per data directory (data_dir_lock.h).
//
// Thread-safety: every public method is safe to call concurrently.
//
// Locks, in the order they are taken (a thread holding one takes only those
// below it; none is taken twice):
//   1. ddl_mu_: creating and dropping collections (the registry's changes).
//   2. snapshot_mu_: a round of snapshots of every collection (Snapshot,
//      maintenance, Close) and the change-log trim that follows it.
//   3. Collection::write_mu(): one collection's writes with their index
//      updates, its snapshots, its rebuild's catch-up, its reindex commit,
//      Verify. One at a time: no thread holds two collections' write locks,
//      so database-wide work (snapshot rounds, backups) takes them one after
//      the other, never all at once.
//   4. Collection::commit_mu() (a reindex commit, under the write lock).
//   5. Leaves, held briefly and never around another engine lock:
//      collections_mu_ (the registry), replicated_mu_, log_mu_ (the pins and
//      snapshot_seq_), a collection's state and reindex-progress mutexes,
//      reindex_mu_, maint_mu_; below them all the store's own write mutex.
//
// The change-log watermark. The log is database-wide and the store gives
// each commit its sequence; collections commit concurrently, each under its
// own lock. Under a collection's write lock its indexes hold all of its
// changes up to the store's LastSequence() (collection.h), so each
// collection's snapshot covers the LastSequence() read under its lock. A
// snapshot round reads LastSequence() first (L) and then snapshots each
// collection, each covering at least L; so the log up to L may go, unless a
// pin (a scan that will read the log after it: a background rebuild, a
// reindex, a backup) needs it: the trim point is min(L, pins). A collection
// created during a round has no snapshot yet and rebuilds from the store if
// the process dies first; startup replays each collection from its own
// snapshot's position and rebuilds any whose records the trim took.

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
#include "engine/backup.h"
#include "engine/collection.h"
#include "engine/documents.h"
#include "engine/data_dir_lock.h"
#include "engine/embed_batcher.h"
#include "engine/embedder.h"
#include "engine/memory_budget.h"
#include "engine/metadata_patch.h"
#include "engine/model_registry.h"
#include "engine/recommend.h"
#include "engine/search_params.h"
#include "engine/tenant_scope.h"
#include "engine/token_budget.h"
#include "engine/vector_verify.h"
#include "common/env.h"
#include "common/env_pausing.h"
#include "common/fault_injector.h"
#include "db/store.h"

namespace neodb::engine {

struct DatabaseOptions {
  // Root directory: store/ (RocksDB), snapshots/<collection>/ and the
  // neodb.pid lock live here.
  std::string data_dir;
  // fsync before acknowledging writes. Default: true.
  bool sync_writes = true;
  // RocksDB's block cache and memtable budget (db::StoreOptions documents
  // them). Defaults: 64 MiB and 32 MiB.
  size_t store_block_cache_bytes = db::StoreOptions().block_cache_bytes;
  size_t store_memtable_bytes = db::StoreOptions().memtable_bytes;
  // Resident memory past which writes and encoder work are refused
  // (engine/memory_budget.h). Zero: no budget. Default: none.
  uint64_t max_memory_bytes = 0;
  // Periodic snapshot of every index when changes happened. Zero: snapshots
  // happen on Snapshot() and Close() only. (The maintenance thread also
  // rebuilds indexes whose tombstones piled up, every 0.5 s, regardless.)
  // Default: 60 s.
  absl::Duration snapshot_interval = absl::Seconds(60);
  // Close() snapshots every index. Tests turn it off to stand in for a crash.
  // Default: true.
  bool snapshot_on_close = true;
  // Snapshots kept per index of a collection. An older one would only help
  // when the newest fails to load and the change log still reaches back to
  // it, but every snapshot round trims the log to the newest (SnapshotAll),
  // so that case rebuilds from the store either way: a second copy of each
  // index on disk (the HNSW's vectors and graph) buys nothing. The newest is
  // renamed into place before the older is removed (index/snapshot.h).
  // Default: 1.
  int snapshots_kept = 1;
  EmbedBatcherOptions batcher;
  // Tokens one Upsert, NearText or Embed request may send to the encoder,
  // chunks of overflow=chunk texts included (token_budget.h); more is
  // RESOURCE_EXHAUSTED. Below 1: no budget. Default: 262144.
  int64_t max_request_tokens = kDefaultMaxRequestTokens;
  // Loads a model directory: collections' own models and reindex targets.
  // May be empty: then every collection must be on the default model.
  EmbedderFactory embedder_factory;
  // The checkpoint directory of the default model passed to Open, recorded
  // with the collections created on it (so they keep their model when the
  // server later starts with another default). Empty: unnamed (tests).
  std::string default_model_dir;
  // The precision the default model was opened with (the server's
  // --precision): what new collections get unless they name another.
  // Default: kF32.
  encoder::Precision default_precision = encoder::Precision::kF32;
  // Loaded models are kept under this many bytes of weights (the least
  // recently used beyond it are unloaded). Default: 8 GiB.
  size_t max_model_bytes = size_t{8} << 30;
  // User collections this database may hold: CreateCollection beyond it is
  // RESOURCE_EXHAUSTED (each collection costs indexes, snapshots and a
  // maintenance pass, so a client must not create them without bound).
  // Collections that already exist when it is lowered stay. Default: 1000.
  size_t max_collections = 1000;
  // Tests only: a reindex's commit sleeps this long after each chunk it
  // moves, so a test can kill the process inside the commit. Default: none.
  absl::Duration test_commit_chunk_delay = absl::ZeroDuration();
  // Tests only: a delete or metadata update by filter calls test_pause
  // (below) before committing its Nth batch (from 1), after the earlier
  // batches committed, so a test can kill -9 it midway. 0: never.
  uint64_t test_selection_pause_at = 0;
  // Tests only: the first Snapshot() after Open calls test_pause just before
  // its Nth file write (counting the snapshot's Env writes from 1; a
  // snapshot with fewer writes does not pause). The hook may block: the
  // server's prints a line and sleeps, so that a test can kill -9 it inside
  // a snapshot (common/env_pausing.h). 0: never. Default: 0.
  uint64_t test_snapshot_pause_at = 0;
  std::function<void(const std::string& what)> test_pause;
  // The file layer of every write to the data directory outside RocksDB
  // (snapshots, backups). Not owned. Default (null): Env::Default().
  Env* env = nullptr;
  // Tests only: every file write, RocksDB's included, asks this injector
  // first (common/fault_injector.h). Not owned. Default: none.
  FaultInjector* test_faults = nullptr;
};

// The keyword index of a collection, for Describe and stats.
struct KeywordInfo {
  uint64_t documents = 0;
  uint64_t terms = 0;
  uint64_t postings = 0;
  uint64_t memory_bytes = 0;    // estimated heap
  uint64_t snapshot_bytes = 0;  // its snapshot file (0: none written yet)
};

struct CollectionInfo {
  db::CollectionSpec spec;
  uint64_t count = 0;       // stored documents
  uint64_t index_size = 0;  // searchable vectors
  std::string index_spec;   // canonical, e.g. "HNSW32"
  KeywordInfo keyword;
};

// How a new collection gets its vectors (CreateCollection).
struct VectorOptions {
  // Default: kModel (the server's default model embeds every text).
  VectorSource source = VectorSource::kModel;
  // kExternal only: the vectors' dimension, 1..65536.
  uint32_t dimension = 0;
  // kExternal only: what the vectors are, 1..128 characters of
  // [A-Za-z0-9_.:/-]; the model id stored with them is "external:<name>".
  // Empty: the collection's name. With a query model it must be empty or that
  // model's id (the client claims its vectors are that model's).
  std::string name;
  // kExternal only: the model that embeds near-text queries. Empty: none
  // (near-text is refused); "default": the server's default model; else a
  // model directory on the server. Its dimension must equal `dimension`.
  std::string query_model;
};

struct VerifyReport {
  uint64_t stored = 0;
  uint64_t indexed = 0;
  uint64_t missing_from_index = 0;
  uint64_t stale_in_index = 0;
  uint64_t foreign_model = 0;
  std::string model_id;
  // The keyword index alone (its discrepancies are also counted in
  // missing_from_index / stale_in_index above).
  uint64_t keyword_indexed = 0;
  uint64_t keyword_missing = 0;
  uint64_t keyword_stale = 0;
  // A keyword index built afresh from the stored documents has the same
  // content (ids, lengths, terms, frequencies: keyword::KeywordIndex::Digest).
  bool keyword_content_matches = false;
  // Stored vectors against the index's entries and against their texts
  // embedded again (engine/vector_verify.h).
  VectorVerifyReport vectors;
};

struct DatabaseStats {
  std::string model_id;  // the default model
  int dimension = 0;
  uint64_t collections = 0;
  uint64_t documents = 0;
  uint64_t snapshot_loads = 0;
  uint64_t index_rebuilds = 0;
  uint64_t replayed_changes = 0;
  uint64_t snapshots_written = 0;
  uint64_t models_loaded = 0;
  // Keyword indexes loaded from their snapshot / built from the store (at
  // startup, and by rebuilds) since the database opened.
  uint64_t keyword_snapshot_loads = 0;
  uint64_t keyword_rebuilds = 0;
  EmbedBatcherStats embed;  // the default model's batcher
  std::string device;       // the default model's: "cpu" or "cuda:N"
  std::string cpu_kernels;  // encoder::CpuKernelInfo()
  // Empty while writes are taken; else why they are refused (Database::
  // WriteState(): read-only on a full disk, or writes stopped by an I/O error).
  std::string read_only_reason;
};

class Database {
 public:
  // Opens (creating when missing) the database in options.data_dir, with
  // `default_model` for new collections and the Embed service, and brings
  // every collection's indexes up to date. FAILED_PRECONDITION naming the
  // directory (and the holder's pid) when another process has it open.
  static absl::StatusOr<std::unique_ptr<Database>> Open(const DatabaseOptions& options,
                                                        std::unique_ptr<Embedder> default_model);
  // Close() unless already closed.
  ~Database();
  Database(const Database&) = delete;
  Database& operator=(const Database&) = delete;

  // Stops background work, snapshots every index, flushes the store.
  // Idempotent; every other method must not be called after it.
  absl::Status Close();

  // --- Collections. `spec.dimension` and the model are the default model's;
  // the index spec is validated against the dimension.
  absl::StatusOr<CollectionInfo> CreateCollection(db::CollectionSpec spec);
  // As above, with the vectors' source: the default model (as above), or the
  // client's vectors (`vectors`' dimension, name and optional query model).
  // INVALID_ARGUMENT for options that do not fit the source; FAILED_PRECONDITION
  // when the query model cannot be loaded.
  absl::StatusOr<CollectionInfo> CreateCollection(db::CollectionSpec spec,
                                                  const VectorOptions& vectors);
  // A collection as `spec` describes it whole (its model, dimension and
  // settings, as another node created it), not on this node's default model:
  // a cluster's replica of a collection a reindex moved to another model.
  // FAILED_PRECONDITION when the spec's model does not load here as that id.
  absl::StatusOr<CollectionInfo> CreateCollectionAs(db::CollectionSpec spec);
  absl::Status DropCollection(const std::string& name);
  absl::StatusOr<CollectionInfo> DescribeCollection(const std::string& name) const;
  // Whether the collection exists; cheap (no counts, no index statistics),
  // for paths that ask on every call.
  bool HasCollection(const std::string& name) const { return Find(name).ok(); }
  absl::StatusOr<std::vector<CollectionInfo>> ListCollections() const;
  // Sets the fusion hybrid queries that name none use (spec.fusion and
  // fusion_alpha; the alpha is kept but unused unless the fusion is
  // "weighted"). Persisted with the spec, in effect for the next query, kept
  // across a running reindex (its commit re-reads the stored spec).
  // INVALID_ARGUMENT for an unknown fusion or an alpha outside 0..1.
  absl::StatusOr<CollectionInfo> SetDefaultFusion(const std::string& name,
                                                  const std::string& fusion, double alpha);

  // --- Documents. Upsert returns the ids (generated ones filled in) in
  // order; *tokens (optional) receives the tokens embedded. All or nothing.
  // Texts are admitted by RequestTokenBudget (token_budget.h) with
  // options.max_request_tokens before anything is queued. Upsert, NearText
  // and Embed stop with CANCELLED once `cancelled` says so (the batcher
  // drops their queued encoder work; embed_batcher.h).
  absl::StatusOr<std::vector<std::string>> Upsert(const std::string& collection,
                                                  std::vector<DocumentInput> docs,
                                                  absl::Time deadline, int64_t* tokens = nullptr,
                                                  const CancelCheck& cancelled = {});
  // Returns how many existed.
  absl::StatusOr<uint64_t> Delete(const std::string& collection,
                                  const std::vector<std::string>& ids);
  // --- Documents chosen by a filter (database_selection.cc). A filter
  // selects the live documents whose metadata it accepts; work over many
  // documents commits in batches of kSelectionBatch, each one atomic store
  // batch under the write lock that re-checks every document against the
  // filter, so a document is changed whole or not at all, a kill -9 leaves
  // a prefix of the batches done, and a write that lands meanwhile is never
  // undone. Stops with CANCELLED (saying how far it got) once `cancelled`
  // says so. A replicated (sharded) collection is FAILED_PRECONDITION.
  static constexpr size_t kSelectionBatch = 256;
  //
  // `tenant`: a multi-tenant collection's calls name the tenant they act
  // for and see its documents only; others name none (tenant_scope.h).
  // INVALID_ARGUMENT otherwise.
  //
  // Live documents `filter` accepts (all when null).
  absl::StatusOr<uint64_t> Count(const std::string& collection, const db::Filter* filter,
                                 std::string_view tenant = {}) const;
  // Deletes the documents `filter` accepts (null: all of `tenant`'s, which
  // must then be named: deleting a tenant); returns how many.
  absl::StatusOr<uint64_t> DeleteWhere(const std::string& collection, const db::Filter* filter,
                                       std::string_view tenant = {},
                                       const CancelCheck& cancelled = {});
  // Each tenant of a multi-tenant collection that has documents, and how
  // many. FAILED_PRECONDITION for another collection.
  absl::StatusOr<std::vector<std::pair<std::string, uint64_t>>> Tenants(
      const std::string& collection) const;
  // Applies `patch` to the metadata of the documents `which` selects, keeping
  // text and vector (nothing is embedded). By ids: one atomic batch, missing
  // ids reported, at most options' documents per request (the caller's limit).
  absl::StatusOr<MetadataUpdateResult> UpdateMetadata(const std::string& collection,
                                                      const DocumentSelection& which,
                                                      const MetadataPatch& patch,
                                                      const CancelCheck& cancelled = {});

  // --- Replicated writes (cluster/). The node that takes a write checks and
  // embeds it here (PrepareUpsert: Upsert without the commit) and publishes
  // the documents, vectors included, to the shard's log; each replica of the
  // shard commits them in log order with ApplyReplicatedUpserts/Deletes,
  // whose store batch also records `from` (the log and the position of the
  // last change applied), so a restart resumes right after it. A document
  // whose vector another model made is FAILED_PRECONDITION (nothing written).
  absl::StatusOr<Collection::PreparedWrite> PrepareUpsert(const std::string& collection,
                                                          std::vector<DocumentInput> docs,
                                                          absl::Time deadline,
                                                          const CancelCheck& cancelled = {});
  absl::Status ApplyReplicatedUpserts(const std::string& collection,
                                      std::vector<db::Document> docs,
                                      const db::SourcePosition& from);
  absl::Status ApplyReplicatedDeletes(const std::string& collection,
                                      const std::vector<std::string>& ids,
                                      const db::SourcePosition& from);
  // Marks `collection` as replicated from a log: from then on (until the
  // process ends) Upsert, Delete, Reindex and DropCollection refuse it with
  // FAILED_PRECONDITION, as its writes must go through its log (local ones
  // would exist on this node alone); ApplyReplicated* still write it.
  void MarkReplicated(const std::string& collection);
  bool IsReplicated(const std::string& collection) const;
  // The last position ApplyReplicated* recorded for `collection` from
  // `source`; 0 when none.
  absl::StatusOr<uint64_t> SourcePositionOf(const std::string& collection,
                                            const std::string& source) const;

  // The scope of a call on `collection` that names `tenant` (empty: none):
  // how the transport maps the caller's ids (tenant_scope.h). NOT_FOUND for
  // an unknown collection, INVALID_ARGUMENT as TenantScope::For. Cheap.
  absl::StatusOr<TenantScope> ScopeOf(const std::string& collection,
                                      std::string_view tenant) const;

  // NOT_FOUND for an unknown collection; missing documents are nullopt.
  absl::StatusOr<std::vector<std::optional<db::Document>>> Get(
      const std::string& collection, const std::vector<std::string>& ids) const;
  // `tenant` as for Count: a multi-tenant collection's pages hold that
  // tenant's documents only.
  absl::StatusOr<db::ListResult> List(const std::string& collection, const std::string& page_token,
                                      size_t limit, std::string_view tenant = {}) const;

  // --- Search. `instruction` replaces the collection's query prefix. The
  // query is embedded with the model of the collection state it searches;
  // params.mode keyword never embeds (so it also works where no model can
  // be loaded). Filters apply inside every leg, before its top-N.
  // FAILED_PRECONDITION for an external-vector collection without a query
  // model, unless the mode is keyword.
  absl::StatusOr<SearchResult> NearText(const std::string& collection, const std::string& query,
                                        const std::optional<std::string>& instruction,
                                        const SearchParams& params, absl::Time deadline,
                                        const CancelCheck& cancelled = {}) const;
  absl::StatusOr<SearchResult> NearVector(const std::string& collection,
                                          const std::vector<float>& vector,
                                          const SearchParams& params) const;

  // Recommend (database_query.cc): a vector search by the query vector
  // RecommendVector makes from `query`'s examples (recommend.h); the example
  // documents are never hits. INVALID_ARGUMENT for a malformed query,
  // NOT_FOUND naming every example id the collection lacks.
  absl::StatusOr<SearchResult> Recommend(const std::string& collection,
                                         const RecommendQuery& query,
                                         const SearchParams& params) const;

  // Many near-text queries on one collection in one call
  // (database_query.cc): the texts to embed go to the collection's model as
  // one embedding batch (one per distinct instruction). The answers are in
  // query order, each its own status: a query that is malformed, too long or
  // fails does not fail the others. The whole call fails only for an
  // unknown collection, no queries, or more than kMaxBatchQueries.
  struct TextQuery {
    std::string query;
    std::optional<std::string> instruction;
    SearchParams params;
  };
  static constexpr size_t kMaxBatchQueries = 256;
  absl::StatusOr<std::vector<absl::StatusOr<SearchResult>>> BatchNearText(
      const std::string& collection, const std::vector<TextQuery>& queries, absl::Time deadline,
      const CancelCheck& cancelled = {}) const;

  // The keyword corpus statistics of `collection` for `query`'s terms, over
  // the documents whose id `within` accepts (all if empty): what a sharded
  // collection's fan-out sums over shards and passes back as
  // SearchParams::keyword_corpus.
  absl::StatusOr<keyword::CorpusStats> KeywordStatistics(
      const std::string& collection, const std::string& query,
      const std::function<bool(std::string_view doc_id)>& within = {}) const;

  // The default model as a service (through its batcher).
  absl::StatusOr<std::vector<encoder::Embedding>> Embed(std::vector<std::string> texts,
                                                        const encoder::EmbedOptions& options,
                                                        absl::Time deadline,
                                                        const CancelCheck& cancelled = {}) const;

  // --- Admin.
  // Snapshots every index; returns the change-log sequence covered.
  absl::StatusOr<uint64_t> Snapshot();
  // Loads the model in `model_dir` (when non-empty, else the collection's
  // own) and starts re-embedding `collection` with it in the background; the
  // collection, and only it, moves to that model. OK at once when a reindex
  // to the same model is running (it joins that one). FAILED_PRECONDITION
  // when one to another model is running, the model cannot be loaded or its
  // dimension differs, or
  // the collection holds client-supplied vectors (nothing to re-embed).
  absl::Status Reindex(const std::string& collection, const std::string& model_dir);
  // What Reindex checks before it loads a model: NOT_FOUND for an unknown
  // collection, FAILED_PRECONDITION for one that holds client-supplied
  // vectors. (A dry run: ReindexRequest.dry_run.)
  absl::Status CheckReindex(const std::string& collection) const;
  // What a reindex of `collection` onto `model_dir` (empty: its own model)
  // would make its spec, with CheckReindex's and Reindex's checks, and
  // without reindexing: a sharded collection's reindex (cluster/) embeds
  // with it (PrepareUpsertAs) and sends the vectors through its log.
  absl::StatusOr<db::CollectionSpec> ReindexedSpec(const std::string& collection,
                                                  const std::string& model_dir);
  // PrepareUpsert as a collection of `spec` would embed (its model, its
  // settings), whether or not such a collection exists here.
  absl::StatusOr<Collection::PreparedWrite> PrepareUpsertAs(const db::CollectionSpec& spec,
                                                            std::vector<DocumentInput> docs,
                                                            absl::Time deadline);
  // Drops this node's copy of a replicated collection (MarkReplicated ends
  // for it): its log is the collection's truth, and the copy is rebuilt from
  // it (a cluster reindex moved the log to another model).
  absl::Status DropReplicatedCopy(const std::string& name);
  // The model directories the server itself chose for `collection`: the
  // default model's (DatabaseOptions::default_model_dir) and the
  // collection's current and previous ones (db::CollectionSpec), empty ones
  // left out. A reindex may name them wherever they lie
  // (api/auth/model_paths.h). NOT_FOUND for an unknown collection.
  absl::StatusOr<std::vector<std::string>> OwnModelDirs(const std::string& collection) const;
  absl::StatusOr<ReindexProgress> GetReindexProgress(const std::string& collection) const;
  // Compares the collection's indexes with its store (ids, keyword content,
  // each stored vector with its index entry) while writes wait, then, with
  // writes going on, embeds a sample of its texts (all with options.full)
  // again and compares them with the stored vectors (vector_verify.h).
  absl::StatusOr<VerifyReport> Verify(const std::string& collection,
                                      const VectorVerifyOptions& options = {}) const;
  absl::Status Compact();
  DatabaseStats Stats() const;
  // A RocksDB integer property of the store, summed over column families
  // (db::Store::IntProperty), for metrics.
  absl::StatusOr<uint64_t> StoreIntProperty(const std::string& name) const;
  // An online backup into `dir` (which must not exist; backup.h says what it
  // holds) while reads and writes continue. Every write acknowledged before
  // the call is in it.
  absl::StatusOr<BackupManifest> Backup(const std::string& dir);

  // OK while the database takes writes; else why not, the status every
  // write gets meanwhile: RESOURCE_EXHAUSTED naming the data directory when
  // it opened read-only on a full disk (database_disk.cc) or its disk filled
  // since. Reads and searches work either way.
  absl::Status WriteState() const;

  // Blocks until no reindex runs (tests).
  void WaitForReindex() const;

 private:
  Database() = default;

  // database_startup.cc
  absl::Status Startup();
  absl::StatusOr<std::shared_ptr<Collection>> LoadCollection(const db::CollectionSpec& spec,
                                                             uint64_t last_seq);
  // Builds fresh indexes from the store and swaps them in. In the background
  // (maintenance), writes go on meanwhile and are caught up under the
  // collection's write lock before the swap; otherwise (startup) nothing else
  // writes.
  absl::Status RebuildIndexes(Collection& c, bool background);
  // Fills `indexes` from one store scan; *covered receives the log position.
  absl::Status FillFromStore(const std::string& name, IndexSet& indexes, uint64_t* covered) const;

  // database_verify.cc: Verify's second half, without the write lock:
  // `sample` (or, with options.full, every document) embedded again under
  // `state`'s model and compared with the stored vectors.
  absl::Status VerifyReembedded(const Collection::State& state, const VectorVerifyOptions& options,
                                std::vector<db::Document> sample, VectorVerifyReport* r) const;

  // database.cc
  absl::StatusOr<std::shared_ptr<Collection>> Find(const std::string& name) const;
  // The collection registered as `name`, with its write lock held (*lock):
  // the registered one once the lock is taken (a drop unregisters under it).
  // NOT_FOUND for an unknown collection.
  absl::StatusOr<std::shared_ptr<Collection>> FindLocked(const std::string& name,
                                                         std::unique_lock<std::mutex>* lock) const;
  // options_.test_selection_pause_at's hook (database_selection.cc).
  void PauseBeforeSelectionBatch(uint64_t batch_number) const;
  // What one batch of a selection does with its documents (read under the
  // write lock, still accepted by the filter); returns how many it changed.
  using BatchCommit = std::function<absl::StatusOr<uint64_t>(std::vector<db::Document>)>;
  // The one loop of DeleteWhere and UpdateMetadata: `ids` of `c` in batches
  // of `batch_size`, each under the write lock, re-read from the store and
  // re-checked against `filter` (null: all found), handed to `commit`, then
  // carried into the indexes. Ids not found go to `missing` (if not null);
  // *done counts what the batches changed, also when one fails (the error
  // says how far it got). `what` names the work in errors.
  absl::Status CommitSelection(const std::shared_ptr<Collection>& c, const char* what,
                               const std::vector<std::string>& ids, size_t batch_size,
                               const db::Filter* filter, const CancelCheck& cancelled,
                               std::vector<std::string>* missing, const BatchCommit& commit,
                               uint64_t* done);
  std::vector<std::shared_ptr<Collection>> AllCollections() const;
  std::string SnapshotDir(const std::string& name) const;
  // The collection state's model, loaded on first use.
  absl::StatusOr<std::shared_ptr<Model>> ModelOf(const Collection::State& state) const;

  // database_backup.cc: Backup's body, into the directory it created.
  absl::StatusOr<BackupManifest> BackupInto(const std::string& dir);
  // Snapshots every collection's indexes into `dir`/snapshots/<name>, each
  // under its write lock, each covering the log up to at least *covered,
  // which it pins (pins_) even on failure: the caller unpins (Unpin).
  absl::Status WriteBackupSnapshots(const std::string& dir, uint64_t* covered);

  // database_maintenance.cc
  // A snapshot round: every collection, one at a time under its write lock,
  // then the trim (above). Returns the position every snapshot covers.
  // REQUIRES: snapshot_mu_ held, or Startup/Close when nothing else runs.
  absl::StatusOr<uint64_t> SnapshotAll();
  // Snapshots `c` into `dir` under its write lock, covering the log up to
  // LastSequence() read there, keeping `keep`. A dropped collection is
  // skipped (OK, nothing written: a snapshot written after the drop could
  // load into a collection created again under its name).
  absl::Status SnapshotCollection(Collection& c, const std::string& dir, int keep);
  // Pins the log after LastSequence() (no trim past it) and returns the pin.
  uint64_t Pin();
  void Unpin(uint64_t pin);
  void MaintenanceLoop();
  bool Stopping();

  // database_disk.cc. From the maintenance thread: a store that opened
  // read-only on a full disk reopens writable once there is room, then the
  // work Startup deferred (interrupted reindexes) runs.
  void ProbeWritable();
  bool reindexes_deferred_ = false;  // set by Open; then the maintenance thread's

  // database_reindex.cc
  // After Startup: restarts each reindex that a crash or a shutdown
  // interrupted before its commit (database_reindex.cc says why it resumes);
  // where one cannot start, its collection's progress says FAILED and why.
  void ResumeInterruptedReindexes();
  void ReindexJob(std::shared_ptr<Collection> c, std::shared_ptr<Model> target);
  absl::Status ReindexRun(Collection& c, Model& target);
  // The model a reindex of `state`'s collection onto `model_dir` (empty: its
  // own) embeds with, its dimension checked.
  absl::StatusOr<std::shared_ptr<Model>> ReindexTarget(const Collection::State& state,
                                                      const std::string& model_dir);
  // REQUIRES: ddl_mu_ and c's write lock held; c is the registered `name`.
  absl::Status DropLocked(Collection& c);
  // Creates the collection `spec` describes (its fields all filled in).
  absl::StatusOr<CollectionInfo> CreateResolved(db::CollectionSpec spec);

  DatabaseOptions options_;
  // Every file write of the data directory outside RocksDB (common/env.h):
  // options_.env, wrapped in fault_env_ when options_.test_faults is set.
  Env* env_ = nullptr;
  std::unique_ptr<Env> fault_env_;
  // Wraps env_ when options_.test_snapshot_pause_at is set (one use).
  std::unique_ptr<PausingEnv> pausing_env_;
  bool snapshot_pause_used_ = false;  // guarded by snapshot_mu_
  std::unique_ptr<DataDirLock> lock_;
  std::unique_ptr<db::Store> store_;
  std::unique_ptr<MemoryBudget> memory_budget_;
  std::unique_ptr<ModelRegistry> models_;

  mutable std::shared_mutex collections_mu_;
  mutable std::mutex replicated_mu_;
  std::set<std::string> replicated_;  // guarded by replicated_mu_
  absl::Status RefuseIfReplicated(const std::string& collection, const char* what) const;
  std::map<std::string, std::shared_ptr<Collection>> collections_;

  // Creating and dropping collections (lock order above).
  std::mutex ddl_mu_;
  // One snapshot round at a time (SnapshotAll, and its trim).
  std::mutex snapshot_mu_;
  // Guards the two below (a leaf: nothing is taken under it but the store's
  // own mutex, for the trim).
  mutable std::mutex log_mu_;
  uint64_t snapshot_seq_ = 0;     // covered by every snapshot of the last round
  std::multiset<uint64_t> pins_;  // change-log positions still needed (no trim past them)

  std::atomic<uint64_t> snapshot_loads_{0};
  std::atomic<uint64_t> index_rebuilds_{0};
  std::atomic<uint64_t> replayed_changes_{0};
  std::atomic<uint64_t> snapshots_written_{0};
  std::atomic<uint64_t> keyword_snapshot_loads_{0};
  std::atomic<uint64_t> keyword_rebuilds_{0};

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
  // Staging collections of reindexes interrupted before their commit, found
  // by Startup for ResumeInterruptedReindexes.
  std::vector<db::CollectionSpec> interrupted_reindexes_;
};

}  // namespace neodb::engine
