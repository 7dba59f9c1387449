#pragma once
// Private structures of Database, shared by its .cc files. Not an API.

#include <memory>
#include <shared_mutex>
#include <string>
#include <unordered_map>

#include "api/database.h"
#include "api/embed_batcher.h"
#include "api/embedder.h"
#include "db/filter.h"
#include "index/vector_index.h"

namespace neodb::api {

// The serving model. Destruction order matters: the batcher (declared last)
// stops its worker before the embedder it uses goes away.
struct Database::Model {
  std::unique_ptr<Embedder> embedder;
  std::unique_ptr<EmbedBatcher> batcher;
};

struct Database::Collection {
  // Guards spec, index (the pointer) and metadata. Searches hold it shared for
  // the whole index search, because the filter reads `metadata`.
  mutable std::shared_mutex mu;
  db::CollectionSpec spec;
  std::shared_ptr<index::VectorIndex> index;
  // internal id → metadata of every live document (what filters read).
  std::unordered_map<int64_t, db::Metadata> metadata;
  // Held shared by searches from index lookup to store verification, and
  // exclusively while a reindex commits (internal ids change then), so no
  // search sees the moment in between.
  mutable std::shared_mutex commit_mu;
  // Startup only: change-log position the loaded index covers.
  uint64_t covered_seq = 0;
  bool needs_rebuild = false;  // guarded by Database::write_mu_
  mutable std::mutex reindex_mu;
  ReindexProgress reindex;  // guarded by reindex_mu
};

// Filter over the in-memory metadata. REQUIRES: the caller holds the
// collection's mu (shared) for the lifetime of the search.
class MetadataIdFilter : public index::IdFilter {
 public:
  MetadataIdFilter(const std::unordered_map<int64_t, db::Metadata>& metadata,
                   const db::Filter& filter)
      : metadata_(metadata), filter_(filter) {}
  bool Allowed(int64_t id) const override {
    auto it = metadata_.find(id);
    return it != metadata_.end() && filter_.Matches(it->second);
  }

 private:
  const std::unordered_map<int64_t, db::Metadata>& metadata_;
  const db::Filter& filter_;
};

// encoder options for a collection's documents or queries.
encoder::EmbedOptions EmbedOptionsFor(const db::CollectionSpec& spec, const std::string& prefix);

}  // namespace neodb::api
