#include "encoder/ops/vec_math_cpu.h"

#include <algorithm>
#include <cmath>

#if defined(__x86_64__) || defined(__i386__)
// GCC 12 reports false (maybe-)uninitialized warnings inside its own AVX-512
// headers (the undefined-vector idiom of _mm512_reduce_*).
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wuninitialized"
#include <immintrin.h>
#define NEODB_HAVE_X86 1
#endif

namespace neodb::encoder::ops::cpu {
namespace {

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

void SoftmaxRowScalar(float* x, int64_t n) {
  const float inv = 1.0f / ExpShiftRowScalar(x, n);
  for (int64_t i = 0; i < n; ++i) x[i] *= inv;
}

void SiluMulScalar(const float* gate, const float* lin, float* out, int64_t n) {
  for (int64_t i = 0; i < n; ++i) {
    out[i] = gate[i] / (1.0f + std::exp(-gate[i])) * lin[i];
  }
}

#if NEODB_HAVE_X86
// ---- AVX-512 bodies -----------------------------------------------------------

#define NEODB_AVX512 __attribute__((target("avx512f")))

// Cephes expf: exp(x) = 2^n · exp(r), r = x − n·ln2 in [−ln2/2, ln2/2].
// Inputs are clamped to [−103, 88.7]; below that the result underflows to a
// denormal or zero through scalef, as exp() would.
NEODB_AVX512 inline __m512 Exp512(__m512 x) {
  x = _mm512_min_ps(_mm512_max_ps(x, _mm512_set1_ps(-103.0f)), _mm512_set1_ps(88.7f));
  const __m512 n = _mm512_roundscale_ps(_mm512_mul_ps(x, _mm512_set1_ps(1.44269504088896341f)),
                                        _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  __m512 r = _mm512_fnmadd_ps(n, _mm512_set1_ps(0.693359375f), x);
  r = _mm512_fnmadd_ps(n, _mm512_set1_ps(-2.12194440e-4f), r);
  __m512 y = _mm512_set1_ps(1.9875691500e-4f);
  y = _mm512_fmadd_ps(y, r, _mm512_set1_ps(1.3981999507e-3f));
  y = _mm512_fmadd_ps(y, r, _mm512_set1_ps(8.3334519073e-3f));
  y = _mm512_fmadd_ps(y, r, _mm512_set1_ps(4.1665795894e-2f));
  y = _mm512_fmadd_ps(y, r, _mm512_set1_ps(1.6666665459e-1f));
  y = _mm512_fmadd_ps(y, r, _mm512_set1_ps(5.0000001201e-1f));
  y = _mm512_fmadd_ps(y, _mm512_mul_ps(r, r), _mm512_add_ps(r, _mm512_set1_ps(1.0f)));
  return _mm512_scalef_ps(y, n);
}

NEODB_AVX512 inline __mmask16 TailMask(int64_t remaining) {
  return remaining >= 16 ? static_cast<__mmask16>(0xffff)
                         : static_cast<__mmask16>((1u << remaining) - 1u);
}

NEODB_AVX512 float ExpShiftRowAvx512(float* x, int64_t n) {
  __m512 vmax = _mm512_set1_ps(-INFINITY);
  for (int64_t i = 0; i < n; i += 16) {
    const __mmask16 k = TailMask(n - i);
    vmax = _mm512_mask_max_ps(vmax, k, vmax, _mm512_maskz_loadu_ps(k, x + i));
  }
  const __m512 m = _mm512_set1_ps(_mm512_reduce_max_ps(vmax));
  __m512 vsum = _mm512_setzero_ps();
  for (int64_t i = 0; i < n; i += 16) {
    const __mmask16 k = TailMask(n - i);
    const __m512 e = Exp512(_mm512_sub_ps(_mm512_maskz_loadu_ps(k, x + i), m));
    _mm512_mask_storeu_ps(x + i, k, e);
    vsum = _mm512_mask_add_ps(vsum, k, vsum, e);
  }
  return _mm512_reduce_add_ps(vsum);
}

NEODB_AVX512 void SoftmaxRowAvx512(float* x, int64_t n) {
  const __m512 inv = _mm512_set1_ps(1.0f / ExpShiftRowAvx512(x, n));
  for (int64_t i = 0; i < n; i += 16) {
    const __mmask16 k = TailMask(n - i);
    _mm512_mask_storeu_ps(x + i, k, _mm512_mul_ps(_mm512_maskz_loadu_ps(k, x + i), inv));
  }
}

NEODB_AVX512 void SiluMulAvx512(const float* gate, const float* lin, float* out, int64_t n) {
  const __m512 one = _mm512_set1_ps(1.0f);
  for (int64_t i = 0; i < n; i += 16) {
    const __mmask16 k = TailMask(n - i);
    const __m512 g = _mm512_maskz_loadu_ps(k, gate + i);
    const __m512 l = _mm512_maskz_loadu_ps(k, lin + i);
    const __m512 e = Exp512(_mm512_sub_ps(_mm512_setzero_ps(), g));
    _mm512_mask_storeu_ps(out + i, k, _mm512_mul_ps(_mm512_div_ps(g, _mm512_add_ps(one, e)), l));
  }
}

bool DetectAvx512() {
  __builtin_cpu_init();
  return __builtin_cpu_supports("avx512f");
}
#else
bool DetectAvx512() { return false; }
#endif

const bool kUseAvx512 = DetectAvx512();

}  // namespace

bool UsingAvx512() { return kUseAvx512; }

void SoftmaxRowInplace(float* x, int64_t n) {
#if NEODB_HAVE_X86
  if (kUseAvx512) return SoftmaxRowAvx512(x, n);
#endif
  SoftmaxRowScalar(x, n);
}

float ExpShiftRowInplace(float* x, int64_t n) {
#if NEODB_HAVE_X86
  if (kUseAvx512) return ExpShiftRowAvx512(x, n);
#endif
  return ExpShiftRowScalar(x, n);
}

void SiluMul(const float* gate, const float* lin, float* out, int64_t n) {
#if NEODB_HAVE_X86
  if (kUseAvx512) return SiluMulAvx512(gate, lin, out, n);
#endif
  SiluMulScalar(gate, lin, out, n);
}

}  // namespace neodb::encoder::ops::cpu
