#include "encoder/ops/low_precision_linear.h"

#include <immintrin.h>

#include <algorithm>
#include <cmath>

#include "common/status_macros.h"
#include "encoder/ops/cpu_kernels.h"
#include "encoder/ops/gemm_cpu.h"

namespace neodb::encoder::ops {
namespace {

template <typename V>
void Grow(V* v, int64_t n) {
  if (static_cast<int64_t>(v->size()) < n) v->resize(n);
}

// The per-call conversions below run once per matmul over the whole
// activation (and, for INT8, the whole S32 result), so at AMX speeds they
// cost as much as the matmul itself unless vectorised: each has an AVX-512
// body (the hosts that have BF16/VNNI mostly have AVX-512) picked from CPUID
// and a portable one (AVX-VNNI-only CPUs). Both bodies give the same result
// up to rounding ties (see QuantiseRowsU8).

// ---- F32 -> BF16, round to nearest even ----
void ToBf16Portable(const float* x, int64_t n, uint16_t* out) {
  for (int64_t i = 0; i < n; ++i) out[i] = F32ToBF16(x[i]);
}

__attribute__((target("avx512f,avx512bw,avx512bf16"))) void ToBf16Avx512Bf16(const float* x,
                                                                             int64_t n,
                                                                             uint16_t* out) {
  int64_t i = 0;
  for (; i + 32 <= n; i += 32) {
    // VCVTNE2PS2BF16: round to nearest even (NaN stays NaN).
    const __m512bh v = _mm512_cvtne2ps_pbh(_mm512_loadu_ps(x + i + 16), _mm512_loadu_ps(x + i));
    _mm512_storeu_si512(out + i, (__m512i)v);
  }
  ToBf16Portable(x + i, n - i, out + i);
}

__attribute__((target("avx512f,avx512bw"))) void ToBf16Avx512(const float* x, int64_t n,
                                                              uint16_t* out) {
  int64_t i = 0;
  const __m512i bias = _mm512_set1_epi32(0x7fff), one = _mm512_set1_epi32(1);
  for (; i + 16 <= n; i += 16) {
    const __m512i bits = _mm512_loadu_si512(x + i);
    // bits + 0x7fff + ((bits >> 16) & 1), then >> 16; NaNs are quietened.
    const __m512i lsb = _mm512_and_si512(_mm512_srli_epi32(bits, 16), one);
    __m512i r = _mm512_srli_epi32(_mm512_add_epi32(_mm512_add_epi32(bits, bias), lsb), 16);
    const __mmask16 nan = _mm512_cmp_ps_mask(_mm512_castsi512_ps(bits),
                                             _mm512_castsi512_ps(bits), _CMP_UNORD_Q);
    r = _mm512_mask_mov_epi32(
        r, nan, _mm512_or_si512(_mm512_srli_epi32(bits, 16), _mm512_set1_epi32(0x40)));
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(out + i), _mm512_cvtepi32_epi16(r));
  }
  ToBf16Portable(x + i, n - i, out + i);
}

void ToBf16(const float* x, int64_t n, uint16_t* out) {
  const CpuFeatures& f = HostCpuFeatures();
  if (f.avx512_bf16) return ToBf16Avx512Bf16(x, n, out);
  if (f.avx512f) return ToBf16Avx512(x, n, out);
  ToBf16Portable(x, n, out);
}

// ---- per-row asymmetric U8 quantisation (formulas in the header) ----
void RowScale(float lo, float hi, float* scale, float* inv, int32_t* zero) {
  const float s = hi > lo ? (hi - lo) / 255.0f : 1.0f;
  *scale = s;
  *inv = 1.0f / s;
  *zero = std::clamp(static_cast<int32_t>(std::nearbyint(-lo * *inv)), 0, 255);
}

void QuantiseRowsU8Portable(const float* x, int64_t n, int64_t k, uint8_t* q, float* scale,
                            int32_t* zero) {
  for (int64_t m = 0; m < n; ++m) {
    const float* row = x + m * k;
    float lo = 0.0f, hi = 0.0f;  // the range always holds 0
    for (int64_t i = 0; i < k; ++i) {
      lo = std::min(lo, row[i]);
      hi = std::max(hi, row[i]);
    }
    float inv;
    RowScale(lo, hi, &scale[m], &inv, &zero[m]);
    const float zf = static_cast<float>(zero[m]);
    uint8_t* out = q + m * k;
    for (int64_t i = 0; i < k; ++i) {
      // Round to nearest even, as the vector body's VCVTPS2DQ does.
      const float v = std::clamp(std::nearbyint(row[i] * inv) + zf, 0.0f, 255.0f);
      out[i] = static_cast<uint8_t>(v);
    }
  }
}

__attribute__((target("avx512f,avx512bw"))) void QuantiseRowsU8Avx512(const float* x, int64_t n,
                                                                      int64_t k, uint8_t* q,
                                                                      float* scale,
                                                                      int32_t* zero) {
  for (int64_t m = 0; m < n; ++m) {
    const float* row = x + m * k;
    __m512 vlo = _mm512_setzero_ps(), vhi = _mm512_setzero_ps();
    int64_t i = 0;
    for (; i + 16 <= k; i += 16) {
      const __m512 v = _mm512_loadu_ps(row + i);
      vlo = _mm512_min_ps(vlo, v);
      vhi = _mm512_max_ps(vhi, v);
    }
    float lo = _mm512_reduce_min_ps(vlo), hi = _mm512_reduce_max_ps(vhi);
    for (int64_t j = i; j < k; ++j) lo = std::min(lo, row[j]), hi = std::max(hi, row[j]);
    float inv;
    RowScale(lo, hi, &scale[m], &inv, &zero[m]);
    const float zf = static_cast<float>(zero[m]);
    const __m512 vinv = _mm512_set1_ps(inv);
    const __m512i vz = _mm512_set1_epi32(zero[m]);
    const __m512i v0 = _mm512_setzero_si512(), v255 = _mm512_set1_epi32(255);
    uint8_t* out = q + m * k;
    for (i = 0; i + 16 <= k; i += 16) {
      // round(x · inv) (nearest even) + zero, clamped to [0, 255].
      __m512i r = _mm512_add_epi32(_mm512_cvtps_epi32(_mm512_mul_ps(_mm512_loadu_ps(row + i), vinv)), vz);
      r = _mm512_min_epi32(_mm512_max_epi32(r, v0), v255);
      _mm_storeu_si128(reinterpret_cast<__m128i*>(out + i), _mm512_cvtepi32_epi8(r));
    }
    for (; i < k; ++i) {
      out[i] = static_cast<uint8_t>(std::clamp(std::nearbyint(row[i] * inv) + zf, 0.0f, 255.0f));
    }
  }
}

void QuantiseRowsU8(const float* x, int64_t n, int64_t k, uint8_t* q, float* scale,
                    int32_t* zero) {
  if (HostCpuFeatures().avx512f) return QuantiseRowsU8Avx512(x, n, k, q, scale, zero);
  QuantiseRowsU8Portable(x, n, k, q, scale, zero);
}

// ---- out (+)= sx[m] · sw[j] · (acc[m, j] − zx[m] · wsum[j]) ----
void DequantisePortable(const int32_t* acc, int64_t n, int64_t cols, const float* sx,
                        const int32_t* zx, const float* sw, const int32_t* wsum, bool accumulate,
                        float* out) {
  for (int64_t m = 0; m < n; ++m) {
    const int32_t* a = acc + m * cols;
    float* o = out + m * cols;
    for (int64_t j = 0; j < cols; ++j) {
      const float v = sx[m] * sw[j] * static_cast<float>(a[j] - zx[m] * wsum[j]);
      o[j] = accumulate ? o[j] + v : v;
    }
  }
}

__attribute__((target("avx512f"))) void DequantiseAvx512(const int32_t* acc, int64_t n,
                                                         int64_t cols, const float* sx,
                                                         const int32_t* zx, const float* sw,
                                                         const int32_t* wsum, bool accumulate,
                                                         float* out) {
  for (int64_t m = 0; m < n; ++m) {
    const int32_t* a = acc + m * cols;
    float* o = out + m * cols;
    const __m512 vsx = _mm512_set1_ps(sx[m]);
    const __m512i vzx = _mm512_set1_epi32(zx[m]);
    int64_t j = 0;
    for (; j + 16 <= cols; j += 16) {
      const __m512i corr = _mm512_sub_epi32(_mm512_loadu_si512(a + j),
                                            _mm512_mullo_epi32(vzx, _mm512_loadu_si512(wsum + j)));
      // Same operation order as the portable body: (sx · sw) · float(corr).
      __m512 v = _mm512_mul_ps(_mm512_mul_ps(vsx, _mm512_loadu_ps(sw + j)), _mm512_cvtepi32_ps(corr));
      if (accumulate) v = _mm512_add_ps(_mm512_loadu_ps(o + j), v);
      _mm512_storeu_ps(o + j, v);
    }
    for (; j < cols; ++j) {
      const float v = sx[m] * sw[j] * static_cast<float>(a[j] - zx[m] * wsum[j]);
      o[j] = accumulate ? o[j] + v : v;
    }
  }
}

void Dequantise(const int32_t* acc, int64_t n, int64_t cols, const float* sx, const int32_t* zx,
                const float* sw, const int32_t* wsum, bool accumulate, float* out) {
  if (HostCpuFeatures().avx512f) {
    return DequantiseAvx512(acc, n, cols, sx, zx, sw, wsum, accumulate, out);
  }
  DequantisePortable(acc, n, cols, sx, zx, sw, wsum, accumulate, out);
}

}  // namespace

void ConvertToBf16(const float* x, int64_t n, uint16_t* out) { ToBf16(x, n, out); }

namespace internal {
void ToBf16(bool avx512, const float* x, int64_t n, uint16_t* out) {
  if (!avx512) return ToBf16Portable(x, n, out);
  if (HostCpuFeatures().avx512_bf16) return ToBf16Avx512Bf16(x, n, out);
  ToBf16Avx512(x, n, out);
}
void QuantiseRowsU8(bool avx512, const float* x, int64_t n, int64_t k, uint8_t* q, float* scale,
                    int32_t* zero) {
  if (avx512) return QuantiseRowsU8Avx512(x, n, k, q, scale, zero);
  QuantiseRowsU8Portable(x, n, k, q, scale, zero);
}
void Dequantise(bool avx512, const int32_t* acc, int64_t n, int64_t cols, const float* sx,
                const int32_t* zx, const float* sw, const int32_t* wsum, bool accumulate,
                float* out) {
  if (avx512) return DequantiseAvx512(acc, n, cols, sx, zx, sw, wsum, accumulate, out);
  DequantisePortable(acc, n, cols, sx, zx, sw, wsum, accumulate, out);
}
}  // namespace internal

LowPrecisionLinear LowPrecisionLinear::Make(const Tensor& w, Precision precision) {
  NEODB_CHECK(w.device() == Device::kCpu && w.dtype() == DType::kF32 && w.rank() == 2);
  NEODB_CHECK(precision == Precision::kBf16 || precision == Precision::kInt8);
  LowPrecisionLinear l;
  l.precision_ = precision;
  l.out_ = w.dim(0);
  l.in_ = w.dim(1);
  const float* src = w.data<float>();
  const int64_t total = l.out_ * l.in_;
  if (precision == Precision::kBf16) {
    l.w_bf16_.resize(total);
    ToBf16(src, total, l.w_bf16_.data());
    return l;
  }
  l.w_s8_.resize(total);
  l.w_scale_.resize(l.out_);
  l.w_rowsum_.resize(l.out_);
  for (int64_t n = 0; n < l.out_; ++n) {
    const float* row = src + n * l.in_;
    float amax = 0.0f;
    for (int64_t i = 0; i < l.in_; ++i) amax = std::max(amax, std::fabs(row[i]));
    const float s = amax > 0.0f ? amax / 127.0f : 1.0f;
    int32_t sum = 0;
    for (int64_t i = 0; i < l.in_; ++i) {
      const int32_t q = std::clamp(static_cast<int32_t>(std::lround(row[i] / s)), -127, 127);
      l.w_s8_[n * l.in_ + i] = static_cast<int8_t>(q);
      sum += q;
    }
    l.w_scale_[n] = s;
    l.w_rowsum_[n] = sum;
  }
  return l;
}

void LowPrecisionLinear::Apply(const float* x, int64_t n, bool accumulate, float* out,
                               LowPrecisionScratch* scratch) const {
  if (n == 0) return;
  const int64_t k = in_;
  if (precision_ == Precision::kBf16) {
    Grow(&scratch->x_bf16, n * k);
    uint16_t* xb = scratch->x_bf16.data();
    ToBf16(x, n * k, xb);
    cpu::MatmulBf16(xb, w_bf16_.data(), n, out_, k, accumulate, out);
    return;
  }
  NEODB_CHECK(precision_ == Precision::kInt8);
  // Row blocks whose S32 result (rows × out) fits in about 1 MiB: the
  // epilogue then reads it from L2 instead of memory (one [4096 × 4096] S32
  // result is 64 MiB and made the epilogue the largest cost after the
  // matmuls).
  const int64_t block = std::clamp<int64_t>((int64_t{1} << 20) / (4 * out_), 32, 1024);
  const int64_t rows = std::min(block, n);
  Grow(&scratch->x_u8, rows * k);
  Grow(&scratch->row_scale, rows);
  Grow(&scratch->row_zero, rows);
  Grow(&scratch->acc, rows * out_);
  for (int64_t m0 = 0; m0 < n; m0 += block) {
    const int64_t r = std::min(block, n - m0);
    QuantiseRowsU8(x + m0 * k, r, k, scratch->x_u8.data(), scratch->row_scale.data(),
                   scratch->row_zero.data());
    cpu::MatmulU8S8(scratch->x_u8.data(), w_s8_.data(), r, out_, k, scratch->acc.data());
    Dequantise(scratch->acc.data(), r, out_, scratch->row_scale.data(), scratch->row_zero.data(),
               w_scale_.data(), w_rowsum_.data(), accumulate, out + m0 * out_);
  }
}

int64_t LowPrecisionLinear::bytes() const {
  return static_cast<int64_t>(w_bf16_.size() * sizeof(uint16_t) + w_s8_.size() +
                              w_scale_.size() * sizeof(float) +
                              w_rowsum_.size() * sizeof(int32_t));
}

int64_t EncoderWeightBytes(const NeoBertConfig& config, Precision precision) {
  const int64_t c = config.hidden_size;
  const int64_t f = config.ffn_dim();
  const int64_t layers = config.num_hidden_layers;
  const int64_t matrix_params = c * (3 * c) + c * c + c * (2 * f) + f * c;
  const int64_t matrix_rows = 3 * c + c + 2 * f + c;
  int64_t matrices = 0;
  switch (precision) {
    case Precision::kF32: matrices = 4 * matrix_params; break;
    case Precision::kBf16: matrices = 2 * matrix_params; break;
    case Precision::kInt8: matrices = matrix_params + 8 * matrix_rows; break;
  }
  const int64_t f32_rest = config.vocab_size * c + layers * 2 * c + c;
  return layers * matrices + 4 * f32_rest;
}

}  // namespace neodb::encoder::ops
