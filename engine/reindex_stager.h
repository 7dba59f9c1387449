#pragma once
// ReindexStager: the re-embedding half of a reindex (database_reindex.cc has
// the rest: the log pin, the commit and the swap). It streams a collection's
// documents through the target model into the staging collection
// (reindex_staging.h) one batch at a time, reusing the vectors an
// interrupted attempt staged for unchanged texts, and then stages again the
// documents written since its scan. It touches only the staging collection:
// the collection itself, its indexes and the write lock are the caller's.
//
// Thread-safety: one job drives it; the store is safe to share.

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "db/store.h"
#include "encoder/encoder.h"
#include "engine/model_registry.h"

namespace neodb::engine {

class ReindexStager {
 public:
  // Embeds for collection `name` into `staging` with `target` (documents get
  // `target`'s model id). `progress(done)` after each batch; `stopping()`
  // true cancels between batches (the server shutting down).
  ReindexStager(db::Store& store, std::string name, std::string staging, Model& target,
                encoder::EmbedOptions options, std::function<void(uint64_t)> progress,
                std::function<bool()> stopping);

  // Stage 1: every document of the collection, as of a scan; the log
  // position the scan covers is kept for CatchUp. `resume`: the staging
  // collection holds an interrupted attempt at the same vectors (a staged
  // document with the same text keeps its vector; staged documents deleted
  // since are dropped).
  absl::Status Scan(bool resume);
  // Stage 2: documents written after the last position covered, up to log
  // position `to`, re-read and staged again (or removed from staging).
  // Returns how many changed.
  absl::StatusOr<size_t> CatchUp(uint64_t to);

 private:
  // Embeds the documents of batch_ that carry no vector and writes the batch
  // to staging.
  absl::Status Stage();
  // Removes from staging what an interrupted attempt staged for documents
  // deleted since (one deleted after the scan is caught up like any change);
  // returns how many.
  absl::StatusOr<size_t> DropDeleted();

  db::Store& store_;
  const std::string name_;
  const std::string staging_;
  Model& target_;
  const std::string target_id_;
  const encoder::EmbedOptions options_;
  const std::function<void(uint64_t)> progress_;
  const std::function<bool()> stopping_;
  std::vector<db::Document> batch_;
  uint64_t covered_ = 0;  // the log position staged so far
};

}  // namespace neodb::engine
