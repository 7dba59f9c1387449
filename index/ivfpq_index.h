#pragma once
// IvfPqIndex ("IVF<n>,PQ<m>"): FAISS IndexIVFPQ (8-bit codes) keyed directly by
// internal ids (IVF stores ids itself and supports remove_ids).
//
// Lifecycle: an IVF-PQ index must be trained on representative vectors. Until
// TrainThreshold() = max(39 * nlist, 256) vectors are present, vectors sit in
// an exact FlatIndex buffer and searches are exact. The Add that reaches the
// threshold trains the coarse quantizer and PQ codebooks on the buffered
// vectors (synchronously, under the write lock: for large nlist the owner
// should build such indexes in the background), moves them into the IVF lists
// and drops the buffer. From then on searches are approximate.
// Filters run inside FAISS (IDSelector via SearchParametersIVF); a query that
// returns fewer than k hits while more are allowed is re-run probing every
// list, so filtered queries return min(k, #allowed) hits.
// Thread-safe (see VectorIndex).

#include <memory>
#include <unordered_set>

#include "absl/synchronization/mutex.h"
#include "index/flat_index.h"
#include "index/index_util.h"
#include "index/vector_index.h"

namespace faiss {
struct IndexIVFPQ;
}

namespace neodb::index {

class IvfPqIndex : public VectorIndex {
 public:
  // `nprobe`: lists probed when a query names none; 0 = max(8, nlist / 16).
  // Carried in the spec ("IVF256,PQ16,nprobe=32").
  IvfPqIndex(int dimension, int nlist, int m, Metric metric, int nprobe = 0);
  ~IvfPqIndex() override;

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
  std::string spec() const override;
  Metric metric() const override { return metric_; }
  std::string DebugString() const override;
  absl::StatusOr<std::string> Serialize() const override;

  absl::Status DeserializeBody(ByteReader* r);
  bool trained() const;
  size_t TrainThreshold() const;

 private:
  absl::Status TrainLocked();

  const int dim_;
  const int nlist_;
  const int m_;
  const Metric metric_;
  const int nprobe_;                        // 0: the default
  mutable absl::Mutex mu_;                  // writer-preferring: Adds are not starved by searches
  FlatIndex buffer_;                        // before training
  std::unique_ptr<faiss::IndexIVFPQ> ivf_;  // after training; guarded by mu_
  std::unordered_set<int64_t> live_;        // ids in ivf_
};

}  // namespace neodb::index
