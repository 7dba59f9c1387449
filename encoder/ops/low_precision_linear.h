#pragma once
// A Linear weight [out, in] converted once (at load) for a BF16 or INT8 CPU
// matmul, and the op that applies it to F32 activations:
//   BF16: w rounded to BF16; x rounded to BF16 per call; F32 accumulation.
//   INT8: w quantised symmetrically per output channel n,
//           sw[n] = max_k |w[n,k]| / 127,  wq = round(w / sw) ∈ [−127, 127];
//         x quantised per token m (row) to U8 with a zero point,
//           sx[m] = (max(x_m, 0) − min(x_m, 0)) / 255,  zx[m] = round(−min / sx),
//           xq = clamp(round(x · (1/sx)) + zx, 0, 255)  (round: nearest even);
//         acc = xq · wqᵀ exactly in S32 (oneDNN), then
//           out[m,n] = sx[m] · sw[n] · (acc[m,n] − zx[m] · Σ_k wq[n,k]).
// Rounding errors: BF16 keeps 8 significant bits (relative error ≤ 2⁻⁹ per
// element); INT8 ≤ sx/2 per activation and sw/2 per weight.
//
// Thread-safety: a LowPrecisionLinear is immutable after Make; Apply may run
// concurrently with distinct scratch objects.

#include <cstdint>
#include <cstdlib>
#include <new>
#include <vector>

#include "encoder/backend.h"
#include "encoder/core/tensor.h"

namespace neodb::encoder::ops {

// std::allocator with 64-byte (cache-line) alignment: oneDNN's AMX kernels
// run about 3× slower on operands that are not (measured: U8×S8 at
// 4096×2304×768, 630 vs 1,800 GOP/s).
template <typename T>
struct CacheLineAllocator {
  using value_type = T;
  CacheLineAllocator() = default;
  template <typename U>
  CacheLineAllocator(const CacheLineAllocator<U>&) {}
  T* allocate(size_t n) {
    const size_t bytes = (n * sizeof(T) + 63) / 64 * 64;
    void* p = std::aligned_alloc(64, bytes == 0 ? 64 : bytes);
    if (p == nullptr) throw std::bad_alloc();
    return static_cast<T*>(p);
  }
  void deallocate(T* p, size_t) { std::free(p); }
  template <typename U>
  bool operator==(const CacheLineAllocator<U>&) const { return true; }
};
template <typename T>
using AlignedVector = std::vector<T, CacheLineAllocator<T>>;

// Per-call buffers of Apply, grown to the largest call and reused.
struct LowPrecisionScratch {
  AlignedVector<uint16_t> x_bf16;
  AlignedVector<uint8_t> x_u8;
  std::vector<float> row_scale;
  std::vector<int32_t> row_zero;
  AlignedVector<int32_t> acc;
};

class LowPrecisionLinear {
 public:
  LowPrecisionLinear() = default;
  // REQUIRES: w CPU F32 [out, in]; precision kBf16 or kInt8.
  static LowPrecisionLinear Make(const Tensor& w, Precision precision);

  // out (+)= x · wᵀ. REQUIRES: x dense F32 [n, in]; out dense F32 [n, out]
  // not aliasing x; the host runs this precision (CpuPrecisionFor).
  void Apply(const float* x, int64_t n, bool accumulate, float* out,
             LowPrecisionScratch* scratch) const;

  Precision precision() const { return precision_; }
  int64_t out_features() const { return out_; }
  int64_t in_features() const { return in_; }
  // Bytes the converted weight holds (data plus scales and sums).
  int64_t bytes() const;

 private:
  Precision precision_ = Precision::kF32;
  int64_t out_ = 0;
  int64_t in_ = 0;
  AlignedVector<uint16_t> w_bf16_;  // [out, in]
  AlignedVector<int8_t> w_s8_;      // [out, in]
  std::vector<float> w_scale_;     // [out]
  std::vector<int32_t> w_rowsum_;  // [out]: Σ_k wq[n, k]
};

// Bytes the encoder's weights take in `precision`: the projection and FFN
// matrices as LowPrecisionLinear stores them (F32 for kF32), embeddings and
// norms in F32. The MLM head is not counted.
int64_t EncoderWeightBytes(const NeoBertConfig& config, Precision precision);

// out[i] = BF16(x[i]), round to nearest even, with the widest body the CPU
// has.
void ConvertToBf16(const float* x, int64_t n, uint16_t* out);

namespace internal {
// The per-call conversions of Apply with an explicit body, so tests can run
// the portable body on any host and compare it with the AVX-512 one.
// REQUIRES: avx512 only where HostCpuFeatures().avx512f.
// out[i] = BF16(x[i]), round to nearest even.
void ToBf16(bool avx512, const float* x, int64_t n, uint16_t* out);
// Rows of x [n, k] to U8 with per-row scale and zero point (header formulas).
void QuantiseRowsU8(bool avx512, const float* x, int64_t n, int64_t k, uint8_t* q, float* scale,
                    int32_t* zero);
// out[m, j] (+)= sx[m] · sw[j] · (acc[m, j] − zx[m] · wsum[j]).
void Dequantise(bool avx512, const int32_t* acc, int64_t n, int64_t cols, const float* sx,
                const int32_t* zx, const float* sw, const int32_t* wsum, bool accumulate,
                float* out);
}  // namespace internal

}  // namespace neodb::encoder::ops
