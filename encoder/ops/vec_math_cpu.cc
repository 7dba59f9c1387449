#include "encoder/ops/vec_math_cpu.h"

#include "encoder/core/dtype.h"

#include <algorithm>
#include <cmath>

#include "common/status_macros.h"

#if defined(__x86_64__)
// GCC 12 reports false (maybe-)uninitialized warnings inside its own AVX-512
// headers (the undefined-vector idiom of _mm512_reduce_*).
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wuninitialized"
#include <immintrin.h>
#define NEODB_HAVE_X86 1
#endif

namespace neodb::encoder::ops::cpu {
namespace {

// Cephes expf constants: exp(x) = 2^n · p(r), r = x − n·ln2.
constexpr float kExpHi = 88.7f;
constexpr float kExpLo = -103.0f;  // below: 2^n underflows to a denormal or 0
constexpr float kLog2e = 1.44269504088896341f;
constexpr float kLn2Hi = 0.693359375f;
constexpr float kLn2Lo = -2.12194440e-4f;
constexpr float kP0 = 1.9875691500e-4f, kP1 = 1.3981999507e-3f, kP2 = 8.3334519073e-3f,
                kP3 = 4.1665795894e-2f, kP4 = 1.6666665459e-1f, kP5 = 5.0000001201e-1f;

// ---- Portable bodies --------------------------------------------------------

float ExpShiftRowScalar(float* x, int64_t n) {
  float m = x[0];
  for (int64_t i = 1; i < n; ++i) m = std::max(m, x[i]);
  float sum = 0.0f;
  for (int64_t i = 0; i < n; ++i) {
    x[i] = std::exp(x[i] - m);
    sum += x[i];
  }
  return sum;
}

void SiluMulScalar(const float* gate, const float* lin, float* out, int64_t n) {
  for (int64_t i = 0; i < n; ++i) out[i] = gate[i] / (1.0f + std::exp(-gate[i])) * lin[i];
}

#if NEODB_HAVE_X86
// ---- AVX-512 bodies -----------------------------------------------------------

#define NEODB_AVX512 __attribute__((target("avx512f")))

NEODB_AVX512 inline __m512 Exp512(__m512 x) {
  x = _mm512_min_ps(_mm512_max_ps(x, _mm512_set1_ps(kExpLo)), _mm512_set1_ps(kExpHi));
  const __m512 n = _mm512_roundscale_ps(_mm512_mul_ps(x, _mm512_set1_ps(kLog2e)),
                                        _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  __m512 r = _mm512_fnmadd_ps(n, _mm512_set1_ps(kLn2Hi), x);
  r = _mm512_fnmadd_ps(n, _mm512_set1_ps(kLn2Lo), r);
  __m512 y = _mm512_set1_ps(kP0);
  y = _mm512_fmadd_ps(y, r, _mm512_set1_ps(kP1));
  y = _mm512_fmadd_ps(y, r, _mm512_set1_ps(kP2));
  y = _mm512_fmadd_ps(y, r, _mm512_set1_ps(kP3));
  y = _mm512_fmadd_ps(y, r, _mm512_set1_ps(kP4));
  y = _mm512_fmadd_ps(y, r, _mm512_set1_ps(kP5));
  y = _mm512_fmadd_ps(y, _mm512_mul_ps(r, r), _mm512_add_ps(r, _mm512_set1_ps(1.0f)));
  return _mm512_scalef_ps(y, n);  // y · 2^n, underflowing gracefully
}

NEODB_AVX512 inline __mmask16 TailMask16(int64_t remaining) {
  return remaining >= 16 ? static_cast<__mmask16>(0xffff)
                         : static_cast<__mmask16>((1u << remaining) - 1u);
}

NEODB_AVX512 float ExpShiftRowAvx512(float* x, int64_t n) {
  __m512 vmax = _mm512_set1_ps(-INFINITY);
  for (int64_t i = 0; i < n; i += 16) {
    const __mmask16 k = TailMask16(n - i);
    vmax = _mm512_mask_max_ps(vmax, k, vmax, _mm512_maskz_loadu_ps(k, x + i));
  }
  const __m512 m = _mm512_set1_ps(_mm512_reduce_max_ps(vmax));
  __m512 vsum = _mm512_setzero_ps();
  for (int64_t i = 0; i < n; i += 16) {
    const __mmask16 k = TailMask16(n - i);
    const __m512 e = Exp512(_mm512_sub_ps(_mm512_maskz_loadu_ps(k, x + i), m));
    _mm512_mask_storeu_ps(x + i, k, e);
    vsum = _mm512_mask_add_ps(vsum, k, vsum, e);
  }
  return _mm512_reduce_add_ps(vsum);
}

__attribute__((target("avx512f,avx512bw,avx512vl,avx512bf16"))) float ExpShiftRowToBf16Avx512(const float* x,
                                                                             int64_t n,
                                                                             uint16_t* probs) {
  __m512 vmax = _mm512_set1_ps(-INFINITY);
  for (int64_t i = 0; i < n; i += 16) {
    const __mmask16 k = TailMask16(n - i);
    vmax = _mm512_mask_max_ps(vmax, k, vmax, _mm512_maskz_loadu_ps(k, x + i));
  }
  const __m512 m = _mm512_set1_ps(_mm512_reduce_max_ps(vmax));
  __m512 vsum = _mm512_setzero_ps();
  for (int64_t i = 0; i < n; i += 16) {
    const __mmask16 k = TailMask16(n - i);
    const __m512 e = Exp512(_mm512_sub_ps(_mm512_maskz_loadu_ps(k, x + i), m));
    _mm256_mask_storeu_epi16(probs + i, k, (__m256i)_mm512_cvtneps_pbh(e));
    vsum = _mm512_mask_add_ps(vsum, k, vsum, e);
  }
  return _mm512_reduce_add_ps(vsum);
}

NEODB_AVX512 void SiluMulAvx512(const float* gate, const float* lin, float* out, int64_t n) {
  const __m512 one = _mm512_set1_ps(1.0f);
  for (int64_t i = 0; i < n; i += 16) {
    const __mmask16 k = TailMask16(n - i);
    const __m512 g = _mm512_maskz_loadu_ps(k, gate + i);
    const __m512 l = _mm512_maskz_loadu_ps(k, lin + i);
    const __m512 e = Exp512(_mm512_sub_ps(_mm512_setzero_ps(), g));
    _mm512_mask_storeu_ps(out + i, k, _mm512_mul_ps(_mm512_div_ps(g, _mm512_add_ps(one, e)), l));
  }
}

// ---- AVX2 + FMA bodies ----------------------------------------------------------

#define NEODB_AVX2 __attribute__((target("avx2,fma")))

NEODB_AVX2 inline __m256 Exp256(__m256 x) {
  x = _mm256_min_ps(_mm256_max_ps(x, _mm256_set1_ps(kExpLo)), _mm256_set1_ps(kExpHi));
  const __m256 n = _mm256_round_ps(_mm256_mul_ps(x, _mm256_set1_ps(kLog2e)),
                                   _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  __m256 r = _mm256_fnmadd_ps(n, _mm256_set1_ps(kLn2Hi), x);
  r = _mm256_fnmadd_ps(n, _mm256_set1_ps(kLn2Lo), r);
  __m256 y = _mm256_set1_ps(kP0);
  y = _mm256_fmadd_ps(y, r, _mm256_set1_ps(kP1));
  y = _mm256_fmadd_ps(y, r, _mm256_set1_ps(kP2));
  y = _mm256_fmadd_ps(y, r, _mm256_set1_ps(kP3));
  y = _mm256_fmadd_ps(y, r, _mm256_set1_ps(kP4));
  y = _mm256_fmadd_ps(y, r, _mm256_set1_ps(kP5));
  y = _mm256_fmadd_ps(y, _mm256_mul_ps(r, r), _mm256_add_ps(r, _mm256_set1_ps(1.0f)));
  // 2^n in two steps (n ∈ [−149, 128]): each factor 2^(n/2) stays a normal
  // float, so the product underflows the way scalef does.
  const __m256i ni = _mm256_cvtps_epi32(n);
  const __m256i half = _mm256_srai_epi32(ni, 1);
  const __m256i rest = _mm256_sub_epi32(ni, half);
  const __m256i bias = _mm256_set1_epi32(127);
  const __m256 p1 = _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_add_epi32(half, bias), 23));
  const __m256 p2 = _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_add_epi32(rest, bias), 23));
  return _mm256_mul_ps(_mm256_mul_ps(y, p1), p2);
}

NEODB_AVX2 inline __m256i TailMask8(int64_t remaining) {
  const __m256i lanes = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
  const int r = static_cast<int>(std::min<int64_t>(remaining, 8));
  return _mm256_cmpgt_epi32(_mm256_set1_epi32(r), lanes);
}

NEODB_AVX2 inline float HorizontalMax(__m256 v) {
  __m128 m = _mm_max_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  m = _mm_max_ps(m, _mm_movehl_ps(m, m));
  m = _mm_max_ss(m, _mm_shuffle_ps(m, m, 1));
  return _mm_cvtss_f32(m);
}

NEODB_AVX2 inline float HorizontalSum(__m256 v) {
  __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  s = _mm_add_ps(s, _mm_movehl_ps(s, s));
  s = _mm_add_ss(s, _mm_shuffle_ps(s, s, 1));
  return _mm_cvtss_f32(s);
}

NEODB_AVX2 float ExpShiftRowAvx2(float* x, int64_t n) {
  __m256 vmax = _mm256_set1_ps(-INFINITY);
  const __m256 neg_inf = _mm256_set1_ps(-INFINITY);
  for (int64_t i = 0; i < n; i += 8) {
    const __m256i k = TailMask8(n - i);
    const __m256 v =
        _mm256_blendv_ps(neg_inf, _mm256_maskload_ps(x + i, k), _mm256_castsi256_ps(k));
    vmax = _mm256_max_ps(vmax, v);
  }
  const __m256 m = _mm256_set1_ps(HorizontalMax(vmax));
  __m256 vsum = _mm256_setzero_ps();
  for (int64_t i = 0; i < n; i += 8) {
    const __m256i k = TailMask8(n - i);
    const __m256 e = _mm256_and_ps(Exp256(_mm256_sub_ps(_mm256_maskload_ps(x + i, k), m)),
                                   _mm256_castsi256_ps(k));
    _mm256_maskstore_ps(x + i, k, e);
    vsum = _mm256_add_ps(vsum, e);
  }
  return HorizontalSum(vsum);
}

NEODB_AVX2 void SiluMulAvx2(const float* gate, const float* lin, float* out, int64_t n) {
  const __m256 one = _mm256_set1_ps(1.0f);
  for (int64_t i = 0; i < n; i += 8) {
    const __m256i k = TailMask8(n - i);
    const __m256 g = _mm256_maskload_ps(gate + i, k);
    const __m256 l = _mm256_maskload_ps(lin + i, k);
    const __m256 e = Exp256(_mm256_sub_ps(_mm256_setzero_ps(), g));
    _mm256_maskstore_ps(out + i, k, _mm256_mul_ps(_mm256_div_ps(g, _mm256_add_ps(one, e)), l));
  }
}

VecIsa DetectIsa() {
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx512f")) return VecIsa::kAvx512;
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) return VecIsa::kAvx2;
  return VecIsa::kScalar;
}
#else
VecIsa DetectIsa() { return VecIsa::kScalar; }
#endif

const VecIsa kActiveIsa = DetectIsa();

}  // namespace

VecIsa ActiveVecIsa() { return kActiveIsa; }

const char* VecIsaName(VecIsa isa) {
  switch (isa) {
    case VecIsa::kScalar:
      return "scalar";
    case VecIsa::kAvx2:
      return "avx2";
    case VecIsa::kAvx512:
      return "avx512";
  }
  return "?";
}

bool VecIsaAvailable(VecIsa isa) {
  return static_cast<uint8_t>(isa) <= static_cast<uint8_t>(kActiveIsa);
}

namespace internal {

float ExpShiftRowInplace(VecIsa isa, float* x, int64_t n) {
  NEODB_CHECK(VecIsaAvailable(isa));
  switch (isa) {
#if NEODB_HAVE_X86
    case VecIsa::kAvx512:
      return ExpShiftRowAvx512(x, n);
    case VecIsa::kAvx2:
      return ExpShiftRowAvx2(x, n);
#endif
    default:
      return ExpShiftRowScalar(x, n);
  }
}

void SiluMul(VecIsa isa, const float* gate, const float* lin, float* out, int64_t n) {
  NEODB_CHECK(VecIsaAvailable(isa));
  switch (isa) {
#if NEODB_HAVE_X86
    case VecIsa::kAvx512:
      return SiluMulAvx512(gate, lin, out, n);
    case VecIsa::kAvx2:
      return SiluMulAvx2(gate, lin, out, n);
#endif
    default:
      return SiluMulScalar(gate, lin, out, n);
  }
}

}  // namespace internal

float ExpShiftRowInplace(float* x, int64_t n) {
  return internal::ExpShiftRowInplace(kActiveIsa, x, n);
}

float ExpShiftRowToBf16(float* x, int64_t n, uint16_t* probs) {
#if NEODB_HAVE_X86
  static const bool fused = __builtin_cpu_supports("avx512bf16") &&
                            __builtin_cpu_supports("avx512bw") &&
                            __builtin_cpu_supports("avx512vl");
  if (fused) return ExpShiftRowToBf16Avx512(x, n, probs);
#endif
  const float sum = ExpShiftRowInplace(x, n);
  for (int64_t i = 0; i < n; ++i) probs[i] = F32ToBF16(x[i]);
  return sum;
}

void SoftmaxRowInplace(float* x, int64_t n) {
  const float inv = 1.0f / ExpShiftRowInplace(x, n);
  for (int64_t i = 0; i < n; ++i) x[i] *= inv;
}

void SiluMul(const float* gate, const float* lin, float* out, int64_t n) {
  internal::SiluMul(kActiveIsa, gate, lin, out, n);
}

}  // namespace neodb::encoder::ops::cpu
