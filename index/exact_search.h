#pragma once
// Exact top-k search with OpenBLAS (sgemv for one query, sgemm for batches)
// over a contiguous row-major matrix. Shared by FlatIndex and by the exact
// fallbacks of the approximate indexes. Debian's FAISS lacks AVX2 kernels, but
// OpenBLAS dispatches to the CPU at run time; see bench/README.md ## Index.

#include <cstddef>
#include <cstdint>
#include <functional>
#include <span>
#include <vector>

#include "index/metric.h"

namespace neodb::index {

struct RowHit {
  float score;  // higher is better (metric.h)
  size_t row;
};

// For each of the `nq` queries (row-major, `dim` wide), the best `k` rows of
// `base` (n x dim) among rows with allowed(row) true (all when allowed is
// empty), best first; ties broken by lower row. For kL2, `base_sq_norms`
// holds ||row||^2 (computed on the fly when empty). kCosine is treated as
// inner product: REQUIRES base rows and queries already normalised.
std::vector<std::vector<RowHit>> ExactTopK(const float* base, size_t n, int dim,
                                           std::span<const float> base_sq_norms, Metric metric,
                                           const float* queries, size_t nq, int k,
                                           const std::function<bool(size_t)>& allowed);

// Like ExactTopK for one query, scoring only the listed `rows` of `base` (no
// copy; for small allowed sets). Returned RowHit::row indexes `base`.
std::vector<RowHit> ExactTopKRows(const float* base, int dim, std::span<const size_t> rows,
                                  std::span<const float> base_sq_norms, Metric metric,
                                  const float* query, int k);

// Normalises each of the `n` rows of `data` (dim wide) to unit L2 norm in
// place; zero rows stay zero.
void NormalizeRows(float* data, size_t n, int dim);

float SquaredNorm(const float* v, int dim);

}  // namespace neodb::index
