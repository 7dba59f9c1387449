#pragma once
// Collection: one collection at run time. It owns its settings (including the
// model its vectors come from: checkpoint directory and content hash) and the
// set of indexes derived from its documents, and it acts on them: it turns a
// write's documents into what the store keeps (checked against its settings,
// embedded with its model: PrepareWrite), applies committed changes to its
// indexes (Apply, the one entry a replica drives) and answers searches over
// them, verified against the store (Search). It has its own write lock
// (write_mu()): writes to one collection never wait for another's. The
// Database keeps what the collections share: the registry, the store and its
// change log, maintenance and the model registry. Settings and indexes form one
// immutable State that is replaced whole (a rebuild swaps the indexes, a
// reindex swaps both), so a caller that took a State embeds with that
// State's model and searches that State's indexes: never one model's query
// against another model's index.
//
// Thread-safety: state()/Swap are safe to call concurrently. write_mu() is
// held by every store mutation of this collection together with the index
// update that follows it, so its indexes follow the change log's order for
// its records exactly; `needs_rebuild` and `dropped` are guarded by it.
// commit_mu is held shared by searches from taking the state until their hits
// are verified against the store, and exclusively while a reindex commits
// (documents get new internal ids then). The reindex progress has its own
// mutex. Lock order: database.h.

#include <functional>
#include <memory>
#include <mutex>
#include <shared_mutex>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "db/store.h"
#include "engine/documents.h"
#include "engine/embed_batcher.h"
#include "engine/embed_settings.h"
#include "engine/index_set.h"
#include "engine/model_registry.h"
#include "engine/search_params.h"

namespace neodb::engine {

struct ReindexProgress {
  enum class State { kIdle, kRunning, kDone, kFailed };
  State state = State::kIdle;
  uint64_t done = 0;
  uint64_t total = 0;
  std::string model_id;  // target
  std::string error;
  bool committed = false;  // past the commit marker (reindex_staging.h)
};

class Collection {
 public:
  struct State {
    CollectionSettings settings;
    std::shared_ptr<IndexSet> indexes;
  };

  // `store` holds the collection's documents (shared with the other
  // collections); not owned, outlives the collection.
  Collection(const db::Store& store, CollectionSettings settings,
             std::shared_ptr<IndexSet> indexes)
      : name_(settings.spec.name),
        store_(store),
        state_(std::make_shared<const State>(State{std::move(settings), std::move(indexes)})) {}

  const std::string& name() const { return name_; }

  // The current settings and indexes, as one consistent value.
  std::shared_ptr<const State> state() const {
    std::lock_guard<std::mutex> lock(mu_);
    return state_;
  }
  // Replaces the indexes (a rebuild), keeping the settings.
  void SwapIndexes(std::shared_ptr<IndexSet> indexes) {
    std::lock_guard<std::mutex> lock(mu_);
    state_ = std::make_shared<const State>(State{state_->settings, std::move(indexes)});
  }
  // Replaces the settings, keeping the indexes (a setting that does not
  // change what is indexed, such as the default fusion).
  void SwapSettings(CollectionSettings settings) {
    std::lock_guard<std::mutex> lock(mu_);
    state_ = std::make_shared<const State>(State{std::move(settings), state_->indexes});
  }
  // Replaces settings and indexes together (a reindex).
  void Swap(CollectionSettings settings, std::shared_ptr<IndexSet> indexes) {
    std::lock_guard<std::mutex> lock(mu_);
    state_ = std::make_shared<const State>(State{std::move(settings), std::move(indexes)});
  }

  // --- Writes (collection_write.cc).
  // One upsert's documents as the store keeps them, in request order.
  struct PreparedWrite {
    std::vector<std::string> ids;  // generated ones filled in
    std::vector<db::Document> documents;
    int64_t tokens = 0;  // embedded
  };
  // Checks `docs` against `state`'s settings (ids, metadata, texts, vectors
  // and whose model made them) and embeds the texts that need it with
  // `model`, `state`'s model (null for a collection of client vectors). The
  // texts are admitted by RequestTokenBudget(max_request_tokens) before any
  // encoder work is queued. All or nothing: the first bad document is the error.
  static absl::StatusOr<PreparedWrite> PrepareWrite(const State& state, Model* model,
                                                    std::vector<DocumentInput> docs,
                                                    int64_t max_request_tokens,
                                                    absl::Time deadline,
                                                    const CancelCheck& cancelled);
  // Applies committed changes (log order) to the current indexes. A failure
  // marks the collection for a rebuild (the store committed; the indexes are
  // derived from it) and is returned. REQUIRES: write_mu() held.
  absl::Status Apply(std::span<const Change> changes);

  // The write lock. Every store mutation of this collection (upserts,
  // deletes, selections, spec updates, a reindex's commit, its drop) holds it
  // from the commit until the change is in the indexes (CatchUp); so do its
  // snapshots, a rebuild's catch-up and Verify's comparison. Invariant: while
  // it is held and !needs_rebuild, the indexes hold every change of this
  // collection with a sequence <= the store's LastSequence() (the change log
  // is database-wide; the records of other collections, written under their
  // own locks meanwhile, do not concern these indexes). So a snapshot taken
  // under it covers LastSequence() as read under it.
  std::mutex& write_mu() const { return write_mu_; }
  // Applies this collection's changes committed after `after` (the store's
  // LastSequence() read under write_mu() before the caller's own store
  // write): its own write, since no other writes this collection meanwhile.
  // A failure (reading the log, or an index) marks the collection for a
  // rebuild and is returned. REQUIRES: write_mu() held.
  absl::Status CatchUp(uint64_t after);

  // --- Search (collection_search.cc). Ranks `state`'s indexes by `mode`
  // (hybrid fuses by params.fusion, else the collection's own) and re-reads
  // every hit from the store: one overwritten or deleted meanwhile, or whose
  // vector another model made, is dropped and the search widened. Ties are
  // broken by document id, so equal collections rank equally.
  // REQUIRES: commit_mu() held shared (internal ids stable); `vector` is the
  // query's vector unless the mode is keyword.
  absl::StatusOr<SearchResult> Search(const State& state, const std::vector<float>* vector,
                                      std::string_view query, const SearchParams& params,
                                      SearchMode mode) const;

  // The keyword index's corpus statistics for `query` (a fan-out sums them
  // over shards: keyword::CorpusStats), over the documents whose id `within`
  // accepts (all if empty). REQUIRES: commit_mu() held shared.
  keyword::CorpusStats KeywordStatistics(const State& state, std::string_view query,
                                         const std::function<bool(std::string_view)>& within) const;

  // --- Snapshots (collection_snapshot.cc).
  // What loading a collection found, for the database's counters.
  struct LoadReport {
    bool vector_from_snapshot = false;
    bool keyword_from_snapshot = false;
  };
  // The collection `spec` describes, its indexes each from its newest
  // snapshot under `snapshot_dir` that matches (model, a position no later
  // than `last_seq`, the vector snapshot's position for the indexes keyed by
  // its ids) and the others from one scan of `store`. covered_seq is set to
  // the earliest position a loaded snapshot covers: the caller replays the
  // log after it. REQUIRES: nothing writes the collection meanwhile.
  static absl::StatusOr<std::shared_ptr<Collection>> Load(const db::Store& store,
                                                          const db::CollectionSpec& spec,
                                                          const std::string& snapshot_dir,
                                                          uint64_t last_seq, LoadReport* report);
  // Snapshots every index into `snapshot_dir` covering the log up to
  // `covered_seq`, keeping `keep`, every write through `env`.
  // REQUIRES: the database's write lock (no change applied meanwhile).
  absl::Status SaveSnapshot(Env* env, const std::string& snapshot_dir, uint64_t covered_seq,
                            int keep) const;

  // Writer-preferring, so a reindex commit is not starved by a stream of searches.
  absl::Mutex& commit_mu() const { return commit_mu_; }

  ReindexProgress reindex() const {
    std::lock_guard<std::mutex> lock(reindex_mu_);
    return reindex_;
  }
  template <typename Fn>
  void UpdateReindex(Fn fn) {
    std::lock_guard<std::mutex> lock(reindex_mu_);
    fn(reindex_);
  }

  bool needs_rebuild = false;  // guarded by write_mu()
  // Dropped from the database (guarded by write_mu()): whoever takes the
  // lock after the drop must not write, snapshot or swap it.
  bool dropped = false;
  uint64_t covered_seq = 0;    // startup only: the log position the indexes cover

 private:
  const std::string name_;
  const db::Store& store_;
  mutable std::mutex mu_;
  std::shared_ptr<const State> state_;
  mutable std::mutex write_mu_;
  mutable absl::Mutex commit_mu_;
  mutable std::mutex reindex_mu_;
  ReindexProgress reindex_;
};

}  // namespace neodb::engine
