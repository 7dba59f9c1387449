#pragma once
// Collection: one collection at run time. It owns its settings (including the
// model its vectors come from: checkpoint directory and content hash) and the
// set of indexes derived from its documents. Settings and indexes form one
// immutable State that is replaced whole (a rebuild swaps the indexes, a
// reindex swaps both), so a caller that took a State embeds with that
// State's model and searches that State's indexes: never one model's query
// against another model's index.
//
// Thread-safety: state()/Swap are safe to call concurrently. commit_mu is held
// shared by searches from taking the state until their hits are verified
// against the store, and exclusively while a reindex commits (documents get
// new internal ids then). `needs_rebuild` is guarded by the database's write
// lock; the reindex progress by its own mutex.

#include <memory>
#include <mutex>
#include <shared_mutex>
#include <string>

#include "absl/synchronization/mutex.h"
#include "engine/embed_settings.h"
#include "engine/index_set.h"

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

  Collection(CollectionSettings settings, std::shared_ptr<IndexSet> indexes)
      : name_(settings.spec.name),
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

  bool needs_rebuild = false;  // guarded by Database::write_mu_
  uint64_t covered_seq = 0;    // startup only: the log position the indexes cover

 private:
  const std::string name_;
  mutable std::mutex mu_;
  std::shared_ptr<const State> state_;
  mutable absl::Mutex commit_mu_;
  mutable std::mutex reindex_mu_;
  ReindexProgress reindex_;
};

}  // namespace neodb::engine
