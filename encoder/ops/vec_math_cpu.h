#pragma once
// Vectorised elementwise kernels for the CPU op bodies: softmax rows and
// SiLU·mul, the two places the forward pass needs exp(). The widest body the
// CPU supports is picked once at run time with __builtin_cpu_supports (the
// build needs no -march flag): AVX-512F, else AVX2+FMA, else a portable
// scalar body using std::exp. The vector bodies use the Cephes
// single-precision exp polynomial (≤ 2 ulp on the range used here).
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

// probs[0, n) ← BF16(exp(x − max(x))) (round to nearest even); returns the
// sum of the F32 exps. x is left as is on hosts with AVX512_BF16 (one fused
// pass) and holds the F32 exps elsewhere. REQUIRES: n ≥ 1.
float ExpShiftRowToBf16(float* x, int64_t n, uint16_t* probs);

// out[i] = SiLU(gate[i]) · lin[i] = gate[i] / (1 + exp(−gate[i])) · lin[i].
void SiluMul(const float* gate, const float* lin, float* out, int64_t n);

enum class VecIsa : uint8_t { kScalar, kAvx2, kAvx512 };
// The body the functions above use on this CPU.
VecIsa ActiveVecIsa();
const char* VecIsaName(VecIsa isa);
// Whether `isa` can run here (tests run every available body).
bool VecIsaAvailable(VecIsa isa);

namespace internal {
// The same functions with an explicit body. REQUIRES: VecIsaAvailable(isa).
float ExpShiftRowInplace(VecIsa isa, float* x, int64_t n);
void SiluMul(VecIsa isa, const float* gate, const float* lin, float* out, int64_t n);
}  // namespace internal

}  // namespace neodb::encoder::ops::cpu
