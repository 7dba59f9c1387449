#include "index/exact_search.h"

#include <cblas.h>

#include <algorithm>
#include <cmath>
#include <queue>

#include "index/dot_kernel.h"

namespace neodb::index {
namespace {

// Keeps the k best (score, row) pairs; the worst kept one sits on top.
class TopK {
 public:
  explicit TopK(int k) : k_(static_cast<size_t>(k)) {}
  void Push(float score, size_t row) {
    if (heap_.size() < k_) {
      heap_.push({score, row});
    } else if (Better(score, row, heap_.top().score, heap_.top().row)) {
      heap_.pop();
      heap_.push({score, row});
    }
  }
  // Threshold below which a candidate cannot enter (valid when full).
  bool full() const { return heap_.size() >= k_; }
  float worst() const { return heap_.top().score; }
  std::vector<RowHit> Take() {
    std::vector<RowHit> out(heap_.size());
    for (size_t i = out.size(); i-- > 0;) {
      out[i] = heap_.top();
      heap_.pop();
    }
    return out;
  }

 private:
  static bool Better(float s1, size_t r1, float s2, size_t r2) {
    return s1 > s2 || (s1 == s2 && r1 < r2);
  }
  struct WorseFirst {
    bool operator()(const RowHit& a, const RowHit& b) const {
      return Better(a.score, a.row, b.score, b.row);
    }
  };
  size_t k_;
  std::priority_queue<RowHit, std::vector<RowHit>, WorseFirst> heap_;
};

// Below this many queries each query is scored with DotRows (no BLAS threads,
// safe under concurrent callers); from it on one sgemm per block amortises
// reading the matrix over the batch (bench/README.md ## Index).
constexpr size_t kGemmMinQueries = 4;

// Rows per BLAS call: bounds the score buffer to ~16 MiB whatever nq is.
size_t BlockRows(size_t nq) { return std::max<size_t>(256, (4u << 20) / std::max<size_t>(nq, 1)); }

}  // namespace

float SquaredNorm(const float* v, int dim) { return SquaredNormKernel(v, dim); }

void NormalizeRows(float* data, size_t n, int dim) {
  for (size_t r = 0; r < n; ++r) {
    float* v = data + r * dim;
    float norm = std::sqrt(SquaredNorm(v, dim));
    if (norm > 0) {
      float inv = 1.0f / norm;
      for (int i = 0; i < dim; ++i) v[i] *= inv;
    }
  }
}

std::vector<std::vector<RowHit>> ExactTopK(const float* base, size_t n, int dim,
                                           std::span<const float> base_sq_norms, Metric metric,
                                           const float* queries, size_t nq, int k,
                                           const std::function<bool(size_t)>& allowed) {
  std::vector<TopK> tops(nq, TopK(k));
  std::vector<float> q_norms(nq, 0);
  if (metric == Metric::kL2) {
    for (size_t q = 0; q < nq; ++q) q_norms[q] = SquaredNorm(queries + q * dim, dim);
  }
  const size_t block = BlockRows(nq);
  std::vector<float> scores(std::min(block, std::max<size_t>(n, 1)) * nq);
  std::vector<float> block_norms;
  for (size_t start = 0; start < n; start += block) {
    const size_t rows = std::min(block, n - start);
    const float* x = base + start * dim;
    // scores[q * rows + r] = <query q, row start + r>
    if (nq < kGemmMinQueries) {
      for (size_t q = 0; q < nq; ++q) {
        DotRows(x, rows, dim, queries + q * dim, scores.data() + q * rows);
      }
    } else {
      cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, static_cast<int>(nq),
                  static_cast<int>(rows), dim, 1.0f, queries, dim, x, dim, 0.0f, scores.data(),
                  static_cast<int>(rows));
    }
    const float* norms = nullptr;
    if (metric == Metric::kL2) {
      if (!base_sq_norms.empty()) {
        norms = base_sq_norms.data() + start;
      } else {
        block_norms.resize(rows);
        for (size_t r = 0; r < rows; ++r) block_norms[r] = SquaredNorm(x + r * dim, dim);
        norms = block_norms.data();
      }
    }
    for (size_t q = 0; q < nq; ++q) {
      const float* s = scores.data() + q * rows;
      TopK& top = tops[q];
      for (size_t r = 0; r < rows; ++r) {
        float score = s[r];
        if (norms != nullptr) score = std::min(0.0f, -(norms[r] - 2 * score + q_norms[q]));
        if (top.full() && score < top.worst()) continue;  // cheap reject before the filter
        if (allowed && !allowed(start + r)) continue;
        top.Push(score, start + r);
      }
    }
  }
  std::vector<std::vector<RowHit>> out(nq);
  for (size_t q = 0; q < nq; ++q) out[q] = tops[q].Take();
  return out;
}

std::vector<RowHit> ExactTopKRows(const float* base, int dim, std::span<const size_t> rows,
                                  std::span<const float> base_sq_norms, Metric metric,
                                  const float* query, int k) {
  TopK top(k);
  const float q_norm = metric == Metric::kL2 ? SquaredNorm(query, dim) : 0;
  // Score the rows a chunk at a time with one DotRowsAt call (it prefetches
  // the rows ahead; one DotRows call per row waited on memory, issue 51). Same
  // Dot per row, so the scores are bit-identical. DotRowsAt takes int32 rows:
  // positions are narrowed per chunk (REQUIRES rows < 2^31, as for the walk).
  constexpr size_t kChunk = 256;
  int32_t ids[kChunk];
  float scores[kChunk];
  for (size_t start = 0; start < rows.size(); start += kChunk) {
    const size_t n = std::min(kChunk, rows.size() - start);
    for (size_t i = 0; i < n; ++i) ids[i] = static_cast<int32_t>(rows[start + i]);
    DotRowsAt(base, ids, n, dim, query, scores);
    for (size_t i = 0; i < n; ++i) {
      const size_t row = rows[start + i];
      float score = scores[i];
      if (metric == Metric::kL2) {
        float norm =
            base_sq_norms.empty() ? SquaredNorm(base + row * dim, dim) : base_sq_norms[row];
        score = std::min(0.0f, -(norm - 2 * score + q_norm));
      }
      top.Push(score, row);
    }
  }
  return top.Take();
}

}  // namespace neodb::index
