#pragma once
// PositionedIndex: what FlatIndex and HnswIndex share as VectorIndexes that
// keep each live id at a position (a row of FlatIndex's matrix, a node of
// HnswIndex's graph) under one lock: the dimension and metric, the map from
// live id to position, the methods that need nothing more (Remove, size,
// Contains, Ids, Reconstruct), and a search's checks, query preparation and
// shared lock around the index's own SearchLocked. An index supplies the
// *Locked steps; the lock rules of VectorIndex hold for all of it. Internal
// to index/. Thread-safe (see VectorIndex).

#include <cstdint>
#include <span>
#include <unordered_map>
#include <vector>

#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "index/metric.h"
#include "index/vector_index.h"

namespace neodb::index {

class PositionedIndex : public VectorIndex {
 public:
  absl::StatusOr<size_t> Remove(std::span<const int64_t> ids) override;
  size_t size() const override;
  bool Contains(int64_t id) const override;
  std::vector<int64_t> Ids() const override;
  absl::Status Reconstruct(int64_t id, std::span<float> out) const override;
  int dimension() const override { return dim_; }
  Metric metric() const override { return metric_; }

 protected:
  // REQUIRES: dimension > 0.
  PositionedIndex(int dimension, Metric metric);

  // Checks the arguments and prepares the queries (SearchQueries), then
  // searches them under a shared lock with SearchLocked.
  absl::StatusOr<std::vector<std::vector<SearchHit>>> SearchImpl(
      std::span<const float> queries, int k, const IdFilter* filter,
      const SearchOptions& options) const override;
  // The hits of each query of `q` (queries of dim_ floats, normalised for
  // kCosine), as SearchImpl returns them. REQUIRES: mu_ held (shared);
  // 1 <= k <= kMaxK.
  virtual absl::StatusOr<std::vector<std::vector<SearchHit>>> SearchLocked(
      std::span<const float> q, int k, const IdFilter* filter,
      const SearchOptions& options) const = 0;
  // ALREADY_EXISTS naming the first of `ids` that is live (an Add's check).
  // REQUIRES: mu_ held.
  absl::Status CheckAbsentLocked(std::span<const int64_t> ids) const;
  // Removes the live id at `pos`, from id_to_pos_ too. REQUIRES: mu_ held
  // exclusively.
  virtual void RemoveAtLocked(size_t pos) = 0;
  // Copies the vector stored at live position `pos` into `out` (dim_
  // floats). REQUIRES: mu_ held; out.size() == dim_.
  virtual absl::Status ReconstructAtLocked(size_t pos, std::span<float> out) const = 0;

  const int dim_;
  const Metric metric_;
  mutable absl::Mutex mu_;  // writer-preferring: Adds are not starved by searches
  std::unordered_map<int64_t, size_t> id_to_pos_;  // live ids only; guarded by mu_
};

}  // namespace neodb::index
