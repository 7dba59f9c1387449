#pragma once
// What the index benches share (index_bench, faiss_simd_bench): the clustered
// unit vectors they search, and how their hits are scored against exact ones.

#include <cstdint>
#include <random>
#include <unordered_set>
#include <vector>

#include "index/exact_search.h"
#include "index/vector_index.h"

namespace neodb::bench {

// n unit vectors of `dim`, each a random one of `centers` (rows of dim) plus
// N(0, 0.8²) noise per coordinate; the same seed gives the same vectors.
inline std::vector<float> Clustered(size_t n, int dim, const std::vector<float>& centers,
                                    uint32_t seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> noise(0, 1.0f);
  std::uniform_int_distribution<size_t> pick(0, centers.size() / dim - 1);
  std::vector<float> v(n * dim);
  for (size_t i = 0; i < n; ++i) {
    const float* c = &centers[pick(rng) * dim];
    for (int d = 0; d < dim; ++d) v[i * dim + d] = c[d] + 0.8f * noise(rng);
  }
  neodb::index::NormalizeRows(v.data(), n, dim);
  return v;
}

// Mean over queries of |got ∩ truth| / |truth| (a query with no true hit
// counts 1).
inline double Recall(const std::vector<std::vector<int64_t>>& got,
                     const std::vector<std::vector<int64_t>>& truth) {
  double sum = 0;
  for (size_t q = 0; q < truth.size(); ++q) {
    std::unordered_set<int64_t> t(truth[q].begin(), truth[q].end());
    size_t hit = 0;
    for (int64_t id : got[q]) hit += t.count(id);
    sum += truth[q].empty() ? 1 : double(hit) / truth[q].size();
  }
  return sum / truth.size();
}

inline std::vector<int64_t> Ids(const std::vector<neodb::index::SearchHit>& hits) {
  std::vector<int64_t> out;
  for (const auto& h : hits) out.push_back(h.id);
  return out;
}

}  // namespace neodb::bench
