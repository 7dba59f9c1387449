#pragma once
// Vectorised elementwise kernels for the CPU op bodies: softmax rows and
// SiLU·mul, the two places the forward pass needs exp(). An AVX-512 body is
// picked at run time when the CPU has it (checked once with
// __builtin_cpu_supports, so the build needs no -march flag); otherwise a
// portable scalar body using std::exp runs. The AVX-512 exp is the Cephes
// single-precision polynomial (≤ 2 ulp on the range used here).
//
// Thread-safety: pure functions.

#include <cstdint>

namespace neodb::encoder::ops::cpu {

// x[0, n) ← softmax(x[0, n)), reductions in F32. REQUIRES: n ≥ 1.
void SoftmaxRowInplace(float* x, int64_t n);

// x[0, n) ← exp(x − max(x)); returns the sum of the new values (≥ 1). The
// unnormalised softmax: attention divides its [rows, D] output by the sum
// instead of scaling the [rows, T] probabilities. REQUIRES: n ≥ 1.
float ExpShiftRowInplace(float* x, int64_t n);

// out[i] = SiLU(gate[i]) · lin[i] = gate[i] / (1 + exp(−gate[i])) · lin[i].
void SiluMul(const float* gate, const float* lin, float* out, int64_t n);

// Whether the AVX-512 bodies are in use (for the bench's machine line).
bool UsingAvx512();

}  // namespace neodb::encoder::ops::cpu
