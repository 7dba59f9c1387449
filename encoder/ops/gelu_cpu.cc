#include "encoder/ops/gelu.h"

namespace neodb::encoder::ops::cpu {
namespace {

// erf(x) ≈ x · P(x²) / Q(x²) on [−4, 4]: the single-precision rational
// approximation Eigen and XLA use (P odd of degree 13, Q even of degree 8).
__attribute__((always_inline)) inline float ErfInline(float x) {
  // Ternaries, not std::min/max: GCC 12 turns these into masked operations
  // in the AVX-512 body below, where std::min/max left branches it would not
  // vectorise. The AVX2 and default bodies still run scalar (measured with
  // -fopt-info-vec: no blend is generated for the clamp there).
  x = x > 4.0f ? 4.0f : x;
  x = x < -4.0f ? -4.0f : x;
  const float x2 = x * x;
  float p = -2.72614225801306e-10f;
  p = p * x2 + 2.77068142495902e-08f;
  p = p * x2 + -2.10102402082508e-06f;
  p = p * x2 + -5.69250639462346e-05f;
  p = p * x2 + -7.34990630326855e-04f;
  p = p * x2 + -2.95459980854025e-03f;
  p = p * x2 + -1.60960333262415e-02f;
  p = p * x;
  float q = -1.45660718464996e-05f;
  q = q * x2 + -2.13374055278905e-04f;
  q = q * x2 + -1.68282697438203e-03f;
  q = q * x2 + -7.37332916720468e-03f;
  q = q * x2 + -1.42647390514189e-02f;
  return p / q;
}

}  // namespace

float Erf(float x) { return ErfInline(x); }

// One body per instruction set, chosen at load by the CPU (function
// multi-versioning): the build has no -march flag. The scalar body took 15-29%
// of a MiniLM forward pass (bench/README.md, BERT family section).
__attribute__((target_clones("avx512f", "default")))
void BiasGelu(const float* bias, int64_t rows, int64_t cols, float* u) {
  constexpr float kInvSqrt2 = 0.70710678118654752f;
  for (int64_t r = 0; r < rows; ++r) {
    float* row = u + r * cols;
    for (int64_t c = 0; c < cols; ++c) {
      const float v = row[c] + bias[c];
      row[c] = 0.5f * v * (1.0f + ErfInline(v * kInvSqrt2));
    }
  }
}

}  // namespace neodb::encoder::ops::cpu
