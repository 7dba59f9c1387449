#pragma once
// FlatIndex ("Flat"): exact search over a contiguous matrix with OpenBLAS
// (index/exact_search.h). Chosen over faiss::IndexFlat because Debian's FAISS
// single-query kernels lack AVX2 (bench/README.md ## Index). Removal is O(1)
// (swap with the last row). Thread-safe (see VectorIndex).

#include <unordered_map>

#include "absl/synchronization/mutex.h"
#include "index/index_util.h"
#include "index/vector_index.h"

namespace neodb::index {

class FlatIndex : public VectorIndex {
 public:
  FlatIndex(int dimension, Metric metric);

  absl::Status Add(std::span<const int64_t> ids, std::span<const float> vectors) override;
  absl::StatusOr<size_t> Remove(std::span<const int64_t> ids) override;
  absl::StatusOr<std::vector<std::vector<SearchHit>>> SearchImpl(
      std::span<const float> queries, int k, const IdFilter* filter,
      const SearchOptions& options) const override;
  size_t size() const override;
  bool Contains(int64_t id) const override;
  std::vector<int64_t> Ids() const override;
  absl::Status Reconstruct(int64_t id, std::span<float> out) const override;
  int dimension() const override { return dim_; }
  std::string spec() const override { return "Flat"; }
  Metric metric() const override { return metric_; }
  std::string DebugString() const override;
  absl::StatusOr<std::string> Serialize() const override;

  // Body of Serialize after the common header; used by IvfPqIndex for its buffer.
  void SerializeBody(ByteWriter* w) const;
  absl::Status DeserializeBody(ByteReader* r);
  // Copies out every (id, stored vector) pair (vectors as stored: normalised for cosine).
  void CopyOut(std::vector<int64_t>* ids, std::vector<float>* vectors) const;
  void Clear();

 private:
  void RemoveRowLocked(size_t row);

  const int dim_;
  const Metric metric_;
  mutable absl::Mutex mu_;       // writer-preferring: Adds are not starved by searches
  std::vector<float> data_;      // rows x dim_, guarded by mu_
  std::vector<float> sq_norms_;  // per row, kL2 only
  std::vector<int64_t> ids_;     // per row
  std::unordered_map<int64_t, size_t> row_of_;
};

}  // namespace neodb::index
