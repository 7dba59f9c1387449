#include "encoder/ops/low_precision_linear.h"

#include <algorithm>
#include <cmath>

#include "common/status_macros.h"
#include "encoder/ops/gemm_cpu.h"

namespace neodb::encoder::ops {
namespace {

template <typename V>
void Grow(V* v, int64_t n) {
  if (static_cast<int64_t>(v->size()) < n) v->resize(n);
}

// Per-row asymmetric U8 quantisation (see the header for the formulas).
void QuantiseRowsU8(const float* x, int64_t n, int64_t k, uint8_t* q, float* scale,
                    int32_t* zero) {
  for (int64_t m = 0; m < n; ++m) {
    const float* row = x + m * k;
    float lo = 0.0f, hi = 0.0f;  // the range always holds 0
    for (int64_t i = 0; i < k; ++i) {
      lo = std::min(lo, row[i]);
      hi = std::max(hi, row[i]);
    }
    const float s = hi > lo ? (hi - lo) / 255.0f : 1.0f;
    const float inv = 1.0f / s;
    const int32_t z = std::clamp(static_cast<int32_t>(std::lround(-lo * inv)), 0, 255);
    const float zf = static_cast<float>(z);
    uint8_t* out = q + m * k;
    for (int64_t i = 0; i < k; ++i) {
      // Clamped into [0, 255] first, so + 0.5 and truncation round to nearest.
      const float v = std::clamp(row[i] * inv + zf, 0.0f, 255.0f);
      out[i] = static_cast<uint8_t>(v + 0.5f);
    }
    scale[m] = s;
    zero[m] = z;
  }
}

}  // namespace

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
    for (int64_t i = 0; i < total; ++i) l.w_bf16_[i] = F32ToBF16(src[i]);
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
    for (int64_t i = 0; i < n * k; ++i) xb[i] = F32ToBF16(x[i]);
    cpu::MatmulBf16(xb, w_bf16_.data(), n, out_, k, accumulate, out);
    return;
  }
  NEODB_CHECK(precision_ == Precision::kInt8);
  Grow(&scratch->x_u8, n * k);
  Grow(&scratch->row_scale, n);
  Grow(&scratch->row_zero, n);
  Grow(&scratch->acc, n * out_);
  QuantiseRowsU8(x, n, k, scratch->x_u8.data(), scratch->row_scale.data(),
                 scratch->row_zero.data());
  int32_t* acc = scratch->acc.data();
  cpu::MatmulU8S8(scratch->x_u8.data(), w_s8_.data(), n, out_, k, acc);
  const float* ws = w_scale_.data();
  const int32_t* wsum = w_rowsum_.data();
  for (int64_t m = 0; m < n; ++m) {
    const float sx = scratch->row_scale[m];
    const int32_t zx = scratch->row_zero[m];
    const int32_t* a = acc + m * out_;
    float* o = out + m * out_;
    if (accumulate) {
      for (int64_t j = 0; j < out_; ++j) {
        o[j] += sx * ws[j] * static_cast<float>(a[j] - zx * wsum[j]);
      }
    } else {
      for (int64_t j = 0; j < out_; ++j) {
        o[j] = sx * ws[j] * static_cast<float>(a[j] - zx * wsum[j]);
      }
    }
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
