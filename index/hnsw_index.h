#pragma once
// HnswIndex ("HNSW<M>"): FAISS IndexHNSWFlat over positions 0..n-1, mapped to
// stable internal ids by pos_to_id_.
//
// - FAISS HNSW cannot delete: Remove tombstones the position; every search
//   passes an IDSelector that rejects tombstones (and applies the caller's
//   IdFilter) inside the graph walk, so removed ids are never returned.
//   NeedsRebuild() turns true once tombstones exceed 20% of stored vectors.
// - While live vectors * dimension <= kHnswExactMaxFloats every search is
//   exact (AVX kernels over the HNSW storage): as fast as Debian's non-AVX2
//   graph walk at that size and perfectly accurate (bench/README.md ## Index).
// - FAISS builds and stores the graph; queries walk it with our own search
//   (index/hnsw_walk.h: heaps sized to the query's ef, distances from our dot
//   kernel, as Debian's FAISS computes them with a scalar loop). A filter with
//   a bitmap (IdFilter::Dense) is read through it. FAISS's inserts take their
//   distances from the storage, a KernelFlatStorage: our kernel too
//   (index/kernel_flat_storage.h).
// - Filtered searches estimate the allowed fraction f from a sample. When the
//   allowed set is small (f < kHnswExactFilterFraction or fewer than
//   kHnswExactMaxFloats / dimension allowed vectors) the search is an exact
//   scan of the allowed ids; otherwise the filtered walk, whose beam holds ef
//   allowed nodes, with the same ef as an unfiltered search. Any query that
//   still returns fewer than k hits while more are allowed is redone exactly,
//   so a filtered query returns min(k, #allowed) hits.
// Thread-safe (see VectorIndex).

#include <memory>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "index/index_util.h"
#include "index/positioned_index.h"

namespace faiss {
struct IndexHNSWFlat;
}

namespace neodb::index {

class WalkScratch;

// Exact search is used while the vectors to scan fit in this many floats
// (16 MiB: 16k vectors at 256-d, 5.2k at 768-d). Measured in bench/README.md
// ## Index: at that size one exact query costs about what a graph walk does on
// Debian's FAISS, and it is exact.
inline constexpr size_t kHnswExactMaxFloats = 4u << 20;
inline constexpr double kHnswExactFilterFraction = 0.05;
inline constexpr int kHnswDefaultEfSearch = 64;
inline constexpr int kHnswMaxEfSearch = 2048;
inline constexpr int kHnswEfConstruction = 40;
inline constexpr double kRebuildTombstoneFraction = 0.2;

// Tunables of one HNSW index, carried in its spec ("HNSW32,efConstruction=200";
// index_factory.h) so that they persist with the collection and its snapshots.
struct HnswParams {
  // Build beam (FAISS efConstruction). Default: kHnswEfConstruction.
  int ef_construction = kHnswEfConstruction;
  // Search beam when a query names none (SearchOptions::ef_search = 0).
  // Default: kHnswDefaultEfSearch.
  int ef_search = kHnswDefaultEfSearch;
  // Searches are exact while fewer than this many vectors are live; -1 means
  // kHnswExactMaxFloats / dimension, 0 always walks the graph. Default: -1.
  int64_t exact_below = -1;
};

// A position is a node of the graph (PositionedIndex::id_to_pos_, live ids
// only; pos_to_id_ holds tombstones too).
class HnswIndex : public PositionedIndex {
 public:
  HnswIndex(int dimension, int m, Metric metric, const HnswParams& params = {});
  ~HnswIndex() override;

  absl::Status Add(std::span<const int64_t> ids, std::span<const float> vectors) override;
  std::string spec() const override;
  bool NeedsRebuild() const override;
  std::string DebugString() const override;
  absl::StatusOr<std::string> Serialize() const override;

  absl::Status DeserializeBody(ByteReader* r);
  // Testing/bench knob, in vectors: force every search through the graph (0)
  // or exact (huge). Default kHnswExactMaxFloats / dimension.
  void set_exact_below(size_t n) { exact_below_ = n; }

 private:
  absl::StatusOr<std::vector<std::vector<SearchHit>>> SearchLocked(
      std::span<const float> q, int k, const IdFilter* filter,
      const SearchOptions& options) const override;
  absl::Status ReconstructAtLocked(size_t pos, std::span<float> out) const override;
  // Tombstones `pos`: FAISS HNSW cannot delete.
  void RemoveAtLocked(size_t pos) override;
  // Exact search over the live positions in `positions` (all live when null).
  std::vector<SearchHit> ExactLocked(const float* query, int k, const IdFilter* filter,
                                     const std::vector<size_t>* positions) const;

  const int m_;
  const HnswParams params_;
  size_t exact_below_;
  std::unique_ptr<faiss::IndexHNSWFlat> index_;  // guarded by mu_
  std::vector<int64_t> pos_to_id_;
  std::vector<uint8_t> dead_;    // 1 = tombstone
  std::vector<float> sq_norms_;  // per position, kL2 only
  size_t dead_count_ = 0;

  // Walk buffers kept between searches (a scratch holds 4 bytes per graph
  // node: 400 KB at 100k vectors). A fresh one per query cost an allocation
  // above malloc's mmap threshold, its page faults and zeroing every time
  // (~10% of the server's samples at 100k x 384, bench/peers/README.md); a
  // reused one clears by epoch. At most kMaxIdleScratches stay idle.
  static constexpr size_t kMaxIdleScratches = 8;
  std::unique_ptr<WalkScratch> TakeScratch() const;
  void ReturnScratch(std::unique_ptr<WalkScratch> scratch) const;
  mutable absl::Mutex scratch_mu_;
  mutable std::vector<std::unique_ptr<WalkScratch>> idle_scratch_ ABSL_GUARDED_BY(scratch_mu_);
};

}  // namespace neodb::index
