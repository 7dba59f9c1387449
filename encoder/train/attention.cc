#include "encoder/train/attention.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "encoder/ops/attention.h"
#include "encoder/train/blas.h"

namespace neodb::encoder::train {
namespace {

// What both passes work in: the head width D, the row strides of qkv (3·H·D)
// and of o (H·D), the softmax scale 1/√D, and the longest sequence (which
// sizes the [T, T] scratch).
template <typename T>
struct Geometry {
  int64_t d, ld_qkv, ld_o;
  T scale;
  int64_t max_len;
};

template <typename T>
Geometry<T> GeometryOf(const int64_t* offsets, int64_t batch, int64_t heads, int64_t head_dim) {
  return {head_dim, 3 * heads * head_dim, heads * head_dim,
          static_cast<T>(1.0 / std::sqrt(static_cast<double>(head_dim))),
          ops::LongestSequence(offsets, batch)};
}

// fn(start, len, h, at) for each sequence (its first row, its length) and
// head h: `at` is the offset in qkv (and dqkv) of head h's q in the
// sequence's first row; its k and v follow at +D and +2D.
template <typename Fn>
void ForEachHead(const int64_t* offsets, int64_t batch, int64_t heads, int64_t d, Fn&& fn) {
  for (int64_t b = 0; b < batch; ++b) {
    const int64_t start = offsets[b];
    const int64_t len = offsets[b + 1] - start;
    for (int64_t h = 0; h < heads; ++h) fn(start, len, h, start * 3 * heads * d + 3 * d * h);
  }
}

}  // namespace

template <typename T>
void AttentionForward(const T* qkv, const int64_t* offsets, int64_t batch, int64_t heads,
                      int64_t head_dim, T* o, T* lse) {
  const auto [d, ld_qkv, ld_o, scale, max_len] = GeometryOf<T>(offsets, batch, heads, head_dim);
  std::vector<T> s(static_cast<size_t>(max_len * max_len));
  ForEachHead(offsets, batch, heads, d, [&](int64_t start, int64_t len, int64_t h, int64_t at) {
    const T* q = qkv + at;
    const T* k = q + d;
    const T* v = q + 2 * d;
    // S = scale · q kᵀ, then row softmax in place.
    Gemm<T>(false, true, len, len, d, scale, q, ld_qkv, k, ld_qkv, T(0), s.data(), len);
    for (int64_t i = 0; i < len; ++i) {
      T* row = s.data() + i * len;
      T mx = row[0];
      for (int64_t j = 1; j < len; ++j) mx = std::max(mx, row[j]);
      double sum = 0;
      for (int64_t j = 0; j < len; ++j) {
        row[j] = std::exp(row[j] - mx);
        sum += row[j];
      }
      const T inv = static_cast<T>(1.0 / sum);
      for (int64_t j = 0; j < len; ++j) row[j] *= inv;
      if (lse != nullptr) lse[(start + i) * heads + h] = mx + static_cast<T>(std::log(sum));
    }
    Gemm<T>(false, false, len, d, len, T(1), s.data(), len, v, ld_qkv, T(0),
            o + start * ld_o + d * h, ld_o);
  });
}

// With P = softmax(S): dV = Pᵀ dO; dP = dO Vᵀ; dS = P ⊙ (dP − rowsum(dO ⊙ O));
// dQ = scale · dS K; dK = scale · dSᵀ Q.
template <typename T>
void AttentionBackward(const T* qkv, const T* o, const T* lse, const T* d_o, const int64_t* offsets,
                       int64_t batch, int64_t heads, int64_t head_dim, T* dqkv) {
  const auto [d, ld_qkv, ld_o, scale, max_len] = GeometryOf<T>(offsets, batch, heads, head_dim);
  std::vector<T> p(static_cast<size_t>(max_len * max_len));
  std::vector<T> dp(p.size());
  std::vector<T> delta(static_cast<size_t>(max_len));
  ForEachHead(offsets, batch, heads, d, [&](int64_t start, int64_t len, int64_t h, int64_t at) {
    const T* q = qkv + at;
    const T* k = q + d;
    const T* v = q + 2 * d;
    const T* oh = o + start * ld_o + d * h;
    const T* doh = d_o + start * ld_o + d * h;
    T* dq = dqkv + at;
    T* dk = dq + d;
    T* dv = dq + 2 * d;
    Gemm<T>(false, true, len, len, d, scale, q, ld_qkv, k, ld_qkv, T(0), p.data(), len);
    for (int64_t i = 0; i < len; ++i) {
      const T l = lse[(start + i) * heads + h];
      T* row = p.data() + i * len;
      for (int64_t j = 0; j < len; ++j) row[j] = std::exp(row[j] - l);
      double acc = 0;
      for (int64_t c = 0; c < d; ++c)
        acc += static_cast<double>(doh[i * ld_o + c]) * oh[i * ld_o + c];
      delta[i] = static_cast<T>(acc);
    }
    Gemm<T>(true, false, len, d, len, T(1), p.data(), len, doh, ld_o, T(0), dv, ld_qkv);
    Gemm<T>(false, true, len, len, d, T(1), doh, ld_o, v, ld_qkv, T(0), dp.data(), len);
    for (int64_t i = 0; i < len; ++i) {
      T* dsr = dp.data() + i * len;
      const T* pr = p.data() + i * len;
      for (int64_t j = 0; j < len; ++j) dsr[j] = pr[j] * (dsr[j] - delta[i]);
    }
    Gemm<T>(false, false, len, d, len, scale, dp.data(), len, k, ld_qkv, T(0), dq, ld_qkv);
    Gemm<T>(true, false, len, d, len, scale, dp.data(), len, q, ld_qkv, T(0), dk, ld_qkv);
  });
}

template void AttentionForward<float>(const float*, const int64_t*, int64_t, int64_t, int64_t,
                                      float*, float*);
template void AttentionForward<double>(const double*, const int64_t*, int64_t, int64_t, int64_t,
                                       double*, double*);
template void AttentionBackward<float>(const float*, const float*, const float*, const float*,
                                       const int64_t*, int64_t, int64_t, int64_t, float*);
template void AttentionBackward<double>(const double*, const double*, const double*, const double*,
                                        const int64_t*, int64_t, int64_t, int64_t, double*);

}  // namespace neodb::encoder::train
