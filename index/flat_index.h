#pragma once
// FlatIndex ("Flat"): exact search over a contiguous matrix with OpenBLAS
// (index/exact_search.h). Chosen over faiss::IndexFlat because Debian's FAISS
// single-query kernels lack AVX2 (bench/README.md ## Index). Removal is O(1)
// (swap with the last row). Thread-safe (see VectorIndex).

#include "index/index_util.h"
#include "index/positioned_index.h"

namespace neodb::index {

// A position is a row of the matrix (PositionedIndex::id_to_pos_).
class FlatIndex : public PositionedIndex {
 public:
  FlatIndex(int dimension, Metric metric);

  absl::Status Add(std::span<const int64_t> ids, std::span<const float> vectors) override;
  std::string spec() const override { return "Flat"; }
  std::string DebugString() const override;
  absl::StatusOr<std::string> Serialize() const override;

  // Body of Serialize after the common header; used by IvfPqIndex for its buffer.
  void SerializeBody(ByteWriter* w) const;
  absl::Status DeserializeBody(ByteReader* r);
  // Copies out every (id, stored vector) pair (vectors as stored: normalised for cosine).
  void CopyOut(std::vector<int64_t>* ids, std::vector<float>* vectors) const;
  void Clear();

 private:
  absl::StatusOr<std::vector<std::vector<SearchHit>>> SearchLocked(
      std::span<const float> q, int k, const IdFilter* filter,
      const SearchOptions& options) const override;
  absl::Status ReconstructAtLocked(size_t row, std::span<float> out) const override;
  // Moves the last row into `row` (O(1) removal).
  void RemoveAtLocked(size_t row) override;

  std::vector<float> data_;      // rows x dim_, guarded by mu_
  std::vector<float> sq_norms_;  // per row, kL2 only
  std::vector<int64_t> ids_;     // per row
};

}  // namespace neodb::index
