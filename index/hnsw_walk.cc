#include "index/hnsw_walk.h"

#include <faiss/impl/HNSW.h>

#include <algorithm>
#include <limits>

#include "index/dot_kernel.h"

namespace neodb::index {
namespace {

struct Closer {  // heap order for a max-heap of distances
  bool operator()(const WalkHit& a, const WalkHit& b) const { return a.distance < b.distance; }
};
struct Farther {  // heap order for a min-heap of distances
  bool operator()(const WalkHit& a, const WalkHit& b) const { return a.distance > b.distance; }
};

// Appends the neighbours in graph.neighbors[begin, end) not yet visited to
// scratch->ids (marking them visited) and their distances to scratch->dists.
void UnvisitedNeighbours(const faiss::HNSW& graph, const WalkDistance& dis, size_t begin,
                         size_t end, WalkScratch* scratch) {
  scratch->ids.clear();
  for (size_t j = begin; j < end; ++j) {
    const int32_t v = graph.neighbors[j];
    if (v < 0) break;  // the list is padded with -1
    if (!scratch->TestAndSet(v)) scratch->ids.push_back(v);
  }
  scratch->dists.resize(scratch->ids.size());
  dis.Many(scratch->ids.data(), scratch->ids.size(), scratch->dists.data());
}

}  // namespace

void WalkDistance::SetQuery(const float* q) {
  q_ = q;
  q_norm_ = l2_ ? SquaredNormKernel(q, dim_) : 0;
}

float WalkDistance::Norm(int32_t row) const {
  // The cache covers the rows of successful Adds; a failed Add can leave rows
  // behind it in the graph.
  return static_cast<size_t>(row) < sq_norms_.size()
             ? sq_norms_[row]
             : SquaredNormKernel(xb_ + static_cast<size_t>(row) * dim_, dim_);
}

float WalkDistance::One(int32_t row) const {
  float d;
  Many(&row, 1, &d);
  return d;
}

void WalkDistance::Many(const int32_t* rows, size_t n, float* out) const {
  DotRowsAt(xb_, rows, n, dim_, q_, out);
  for (size_t i = 0; i < n; ++i) {
    out[i] = l2_ ? std::max(0.0f, Norm(rows[i]) - 2 * out[i] + q_norm_) : -out[i];
  }
}

void WalkScratch::Reset(size_t n) {
  if (visited_.size() < n) visited_.resize(n, 0);
  if (++epoch_ == 0) {  // wrapped: old marks could collide
    std::fill(visited_.begin(), visited_.end(), 0);
    epoch_ = 1;
  }
}

std::vector<WalkHit> HnswWalk(const faiss::HNSW& graph, const WalkDistance& dis, int k, int ef,
                              const WalkFilter& filter, WalkScratch* scratch) {
  std::vector<WalkHit> out;
  if (graph.entry_point < 0 || k <= 0) return out;
  ef = std::max(ef, k);
  scratch->Reset(graph.levels.size());

  // Upper levels: move greedily to the closest neighbour until none is closer.
  // Their visits are not remembered (FAISS's greedy_update_nearest does the
  // same): level 0 starts fresh from the node found.
  int32_t entry = graph.entry_point;
  float entry_dist = dis.One(entry);
  for (int level = graph.max_level; level >= 1; --level) {
    for (bool moved = true; moved;) {
      moved = false;
      size_t begin, end;
      graph.neighbor_range(entry, level, &begin, &end);
      scratch->ids.clear();
      for (size_t j = begin; j < end && graph.neighbors[j] >= 0; ++j) {
        scratch->ids.push_back(graph.neighbors[j]);
      }
      scratch->dists.resize(scratch->ids.size());
      dis.Many(scratch->ids.data(), scratch->ids.size(), scratch->dists.data());
      for (size_t i = 0; i < scratch->ids.size(); ++i) {
        if (scratch->dists[i] < entry_dist) {
          entry_dist = scratch->dists[i];
          entry = scratch->ids[i];
          moved = true;
        }
      }
    }
  }

  // Level 0: best-first search keeping the ef closest allowed nodes.
  std::vector<WalkHit>& cand = scratch->candidates;
  std::vector<WalkHit>& res = scratch->results;
  cand.clear();
  res.clear();
  const size_t beam = static_cast<size_t>(ef);
  // The ef-th allowed distance once there are ef; until then nothing is
  // refused.
  float bound = std::numeric_limits<float>::infinity();
  auto offer = [&](float d, int32_t v) {
    cand.push_back({d, v});
    std::push_heap(cand.begin(), cand.end(), Farther());
    if (!filter.all_allowed && !filter.Allows(v)) return;
    res.push_back({d, v});
    std::push_heap(res.begin(), res.end(), Closer());
    if (res.size() > beam) {
      std::pop_heap(res.begin(), res.end(), Closer());
      res.pop_back();
    }
    if (res.size() == beam) bound = res.front().distance;
  };
  // A node's level-0 list: what HNSW::neighbor_range gives, without a call
  // per node.
  const size_t level0_size =
      static_cast<size_t>(graph.cum_nneighbor_per_level[1] - graph.cum_nneighbor_per_level[0]);
  scratch->TestAndSet(entry);
  offer(entry_dist, entry);
  while (!cand.empty()) {
    const WalkHit c = cand.front();
    if (c.distance > bound) break;  // every later candidate is farther still
    std::pop_heap(cand.begin(), cand.end(), Farther());
    cand.pop_back();
    const size_t begin = graph.offsets[c.pos] + graph.cum_nneighbor_per_level[0];
    UnvisitedNeighbours(graph, dis, begin, begin + level0_size, scratch);
    for (size_t i = 0; i < scratch->ids.size(); ++i) {
      if (scratch->dists[i] < bound) offer(scratch->dists[i], scratch->ids[i]);
    }
  }

  std::sort_heap(res.begin(), res.end(), Closer());  // ascending distance
  out.assign(res.begin(), res.begin() + std::min(res.size(), static_cast<size_t>(k)));
  return out;
}

}  // namespace neodb::index
