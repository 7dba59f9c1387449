#include "encoder/train/mlm_head.h"

#include <cblas.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "common/status_macros.h"

namespace neodb::encoder::train {
namespace {

// Row-major C = op(A)·op(B) + beta·C through OpenBLAS, for float and double.
// (Local so this file builds without the rest of encoder/train.)
void Gemm(bool ta, bool tb, int64_t m, int64_t n, int64_t k, const float* a, int64_t lda,
          const float* b, int64_t ldb, float beta, float* c, int64_t ldc) {
  if (m == 0 || n == 0) return;
  cblas_sgemm(CblasRowMajor, ta ? CblasTrans : CblasNoTrans, tb ? CblasTrans : CblasNoTrans,
              static_cast<int>(m), static_cast<int>(n), static_cast<int>(k), 1.0f, a,
              static_cast<int>(lda), b, static_cast<int>(ldb), beta, c, static_cast<int>(ldc));
}
void Gemm(bool ta, bool tb, int64_t m, int64_t n, int64_t k, const double* a, int64_t lda,
          const double* b, int64_t ldb, double beta, double* c, int64_t ldc) {
  if (m == 0 || n == 0) return;
  cblas_dgemm(CblasRowMajor, ta ? CblasTrans : CblasNoTrans, tb ? CblasTrans : CblasNoTrans,
              static_cast<int>(m), static_cast<int>(n), static_cast<int>(k), 1.0, a,
              static_cast<int>(lda), b, static_cast<int>(ldb), beta, c, static_cast<int>(ldc));
}

uint64_t SplitMix64(uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

}  // namespace

MaskedTokens MaskTokens(std::span<const int32_t> ids, const MlmMaskOptions& options,
                        uint64_t seed) {
  NEODB_CHECK(options.rate > 0.0 && options.rate < 1.0);
  NEODB_CHECK(options.mask_id >= 0);
  MaskedTokens out;
  out.input_ids.assign(ids.begin(), ids.end());
  const uint64_t key = SplitMix64(seed ^ 0x6d6c6d2d6d61736bULL);  // "mlm-mask"
  int64_t fallback = -1;
  uint64_t fallback_hash = std::numeric_limits<uint64_t>::max();
  for (size_t i = 0; i < ids.size(); ++i) {
    const int32_t id = ids[i];
    if (std::find(options.special_ids.begin(), options.special_ids.end(), id) !=
        options.special_ids.end()) {
      continue;
    }
    const uint64_t h = SplitMix64(key ^ SplitMix64(static_cast<uint64_t>(i)));
    const double u = static_cast<double>(h >> 11) * 0x1.0p-53;
    if (u < options.rate) {
      out.rows.push_back(static_cast<int64_t>(i));
      out.labels.push_back(id);
      out.input_ids[i] = options.mask_id;
    } else if (h < fallback_hash) {
      fallback_hash = h;
      fallback = static_cast<int64_t>(i);
    }
  }
  if (out.rows.empty() && fallback >= 0) {
    out.rows.push_back(fallback);
    out.labels.push_back(ids[fallback]);
    out.input_ids[fallback] = options.mask_id;
  }
  return out;
}

template <typename T>
MlmLossResult MlmHeadLoss(const MlmHeadView<T>& head, const T* hidden, int64_t rows_total,
                          std::span<const int64_t> rows, std::span<const int32_t> labels,
                          T* d_hidden, T* d_weight, T* d_bias, T grad_scale) {
  NEODB_CHECK(rows.size() == labels.size() && !rows.empty());
  const int64_t n = static_cast<int64_t>(rows.size());
  const int64_t c = head.c;
  const int64_t v = head.vocab;
  // Gather the masked rows: h [n, c].
  std::vector<T> h(static_cast<size_t>(n * c));
  for (int64_t i = 0; i < n; ++i) {
    NEODB_CHECK(rows[i] >= 0 && rows[i] < rows_total);
    NEODB_CHECK(labels[i] >= 0 && labels[i] < v);
    std::copy_n(hidden + rows[i] * c, c, h.data() + i * c);
  }
  // logits [n, v] = h · weightᵀ + bias.
  std::vector<T> logits(static_cast<size_t>(n * v));
  for (int64_t i = 0; i < n; ++i) std::copy_n(head.bias, v, logits.data() + i * v);
  Gemm(false, true, n, v, c, h.data(), c, head.weight, c, T(1), logits.data(), v);

  MlmLossResult result;
  result.masked = n;
  double loss = 0;
  const T inv_n = grad_scale / static_cast<T>(n);
  for (int64_t i = 0; i < n; ++i) {
    T* z = logits.data() + i * v;
    const T* best = std::max_element(z, z + v);
    const T max = *best;
    if (best - z == labels[i]) ++result.correct;
    // Softmax in place, the sum accumulated in double.
    double sum = 0;
    for (int64_t j = 0; j < v; ++j) sum += std::exp(static_cast<double>(z[j] - max));
    const double log_sum = std::log(sum) + static_cast<double>(max);
    loss += log_sum - static_cast<double>(z[labels[i]]);
    // dlogits = (softmax − onehot) / n, reusing the logits buffer.
    for (int64_t j = 0; j < v; ++j) {
      z[j] = static_cast<T>(std::exp(static_cast<double>(z[j]) - log_sum)) * inv_n;
    }
    z[labels[i]] -= inv_n;
  }
  result.loss = loss / static_cast<double>(n);
  if (d_weight != nullptr) {
    // d_weight [v, c] += dlogitsᵀ [v, n] · h [n, c].
    Gemm(true, false, v, c, n, logits.data(), v, h.data(), c, T(1), d_weight, c);
  }
  if (d_bias != nullptr) {
    for (int64_t i = 0; i < n; ++i) {
      const T* g = logits.data() + i * v;
      for (int64_t j = 0; j < v; ++j) d_bias[j] += g[j];
    }
  }
  if (d_hidden != nullptr) {
    // dh [n, c] = dlogits [n, v] · weight [v, c], scattered onto the rows.
    std::vector<T> dh(static_cast<size_t>(n * c));
    Gemm(false, false, n, c, v, logits.data(), v, head.weight, c, T(0), dh.data(), c);
    for (int64_t i = 0; i < n; ++i) {
      T* dst = d_hidden + rows[i] * c;
      const T* src = dh.data() + i * c;
      for (int64_t k = 0; k < c; ++k) dst[k] += src[k];
    }
  }
  return result;
}

template MlmLossResult MlmHeadLoss<float>(const MlmHeadView<float>&, const float*, int64_t,
                                          std::span<const int64_t>, std::span<const int32_t>,
                                          float*, float*, float*, float);
template MlmLossResult MlmHeadLoss<double>(const MlmHeadView<double>&, const double*, int64_t,
                                           std::span<const int64_t>, std::span<const int32_t>,
                                           double*, double*, double*, double);

}  // namespace neodb::encoder::train
