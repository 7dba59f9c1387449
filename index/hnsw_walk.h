#pragma once
// HnswWalk: the query-time search over the graph of a faiss::HNSW (its
// neighbour lists; FAISS still builds and stores the graph), with our dot
// kernel for distances and heaps sized to the query's ef.
//
// Why not faiss::HNSW::search (1.7.3): its candidate list (MinimaxHeap) is
// sized by the member efSearch, not the query's, and is scanned linearly for
// every node expanded (pop_min, count_below); it stops after ef *visited*
// distances, allowed or not, so a filtered search had to scale ef by 1/f and
// visit ~3x the nodes (bench/README.md ## Hybrid search).
//
// The walk: a greedy descent through the upper levels, then the standard
// filtered best-first search of level 0 (as hnswlib's searchBaseLayerST with
// a filter): a min-heap of candidates to expand and a max-heap of the best
// ef *allowed* nodes found. Every node is traversed, allowed or not; only
// allowed nodes enter the results; the walk stops when the closest
// unexpanded candidate is farther than the ef-th allowed result. With ef at
// least the number of allowed nodes it expands every reachable node and is
// exact over them.
//
// Thread-safety: a pure function of its arguments; the graph, vectors and
// filter must not change during the call (the caller's lock). A WalkScratch
// belongs to one thread.

#include <cstddef>
#include <cstdint>
#include <vector>

#include "index/id_bitmap.h"
#include "index/vector_index.h"

namespace faiss {
struct HNSW;
}

namespace neodb::index {

// Distances over row-major vectors, smaller is closer: -<q, x> for inner
// product (and cosine, over normalised rows), ||x||^2 - 2<q, x> + ||q||^2
// (clamped at 0) for L2.
class WalkDistance {
 public:
  // `xb`: the rows; `sq_norms`: the squared norm of each row, for L2 (rows
  // beyond it have theirs computed). Both are borrowed.
  WalkDistance(const float* xb, int dim, bool l2, const std::vector<float>& sq_norms)
      : xb_(xb), dim_(dim), l2_(l2), sq_norms_(sq_norms) {}
  // `q` is borrowed until the next SetQuery.
  void SetQuery(const float* q);
  float One(int32_t row) const;
  // out[i] = distance to rows[i], i in [0, n).
  void Many(const int32_t* rows, size_t n, float* out) const;

 private:
  float Norm(int32_t row) const;

  const float* xb_;
  const int dim_;
  const bool l2_;
  const std::vector<float>& sq_norms_;
  const float* q_ = nullptr;
  float q_norm_ = 0;
};

// Which graph positions a walk may return. Positions at or beyond `size` (a
// failed Add's rows) never are; otherwise a tombstone (dead[p] != 0) never
// is; otherwise the bitmap (tested with ids[p]) decides when set, else the
// filter when set, else the position is allowed. All pointers are borrowed.
struct WalkFilter {
  size_t size = 0;
  const uint8_t* dead = nullptr;  // REQUIRED: size entries
  const int64_t* ids = nullptr;   // REQUIRED when bitmap or filter is set
  const IdBitmap* bitmap = nullptr;
  const IdFilter* filter = nullptr;
  // True when no position below `size` is excluded: the walk skips Allows.
  bool all_allowed = false;

  bool Allows(size_t pos) const {
    if (pos >= size || dead[pos]) return false;
    if (bitmap != nullptr) return bitmap->Test(ids[pos]);
    return filter == nullptr || filter->Allowed(ids[pos]);
  }
};

struct WalkHit {
  float distance;
  int32_t pos;
};

// Buffers reused across the walks of one thread: the visited marks (an epoch
// per node, so no clearing between queries) and the heaps.
class WalkScratch {
 public:
  // Marks every node unvisited for a graph of n nodes.
  void Reset(size_t n);
  // Marks `pos` visited; returns whether it already was.
  bool TestAndSet(int32_t pos) {
    uint32_t& v = visited_[pos];
    if (v == epoch_) return true;
    v = epoch_;
    return false;
  }

  std::vector<WalkHit> candidates;  // min-heap by distance
  std::vector<WalkHit> results;     // max-heap by distance
  std::vector<int32_t> ids;         // one node's unvisited neighbours
  std::vector<float> dists;         // their distances

 private:
  std::vector<uint32_t> visited_;
  uint32_t epoch_ = 0;
};

// The up to k allowed positions closest to the query set in `dis`, closest
// first, found with a beam of max(ef, k). Fewer than k only when the walk
// reached fewer than k allowed nodes (a very selective filter, or a graph
// whose level 0 is not connected); the caller may then scan exactly.
// REQUIRES: `dis` has a query; `graph` is the graph over dis's rows.
std::vector<WalkHit> HnswWalk(const faiss::HNSW& graph, const WalkDistance& dis, int k, int ef,
                              const WalkFilter& filter, WalkScratch* scratch);

}  // namespace neodb::index
