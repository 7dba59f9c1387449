#pragma once
// The encoder's CPU GEMMs, all through oneDNN, which picks its kernels from
// CPUID at run time (AVX2, AVX-512, AVX512_BF16, VNNI, AMX): see
// cpu_kernels.h for why not OpenBLAS. Row-major throughout; leading
// dimensions in elements.
//
// Threads: oneDNN (Debian's build) uses OpenMP; the number of threads is the
// calling thread's OpenMP setting, which SetGemmThreads sets for the calling
// thread only. Every function is thread-safe.

#include <cstdint>

namespace neodb::encoder::ops::cpu {

// Sets the calling thread's OpenMP thread count (the GEMMs' threads).
void SetGemmThreads(int num_threads);

// c[m, n] = alpha · a[m, k] · op(b) + beta · c, op(b) = b [k, n] or, when
// trans_b, bᵀ with b [n, k].
void Sgemm(bool trans_b, int64_t m, int64_t n, int64_t k, float alpha, const float* a,
           int64_t lda, const float* b, int64_t ldb, float beta, float* c, int64_t ldc);

// c[m, n] (+)= a[m, k] · op(b) with BF16 inputs and F32 accumulation and
// output: op(b) = bᵀ with b [n, k] when trans_b, else b [k, n]. Leading
// dimensions in elements; `accumulate` adds to c.
// REQUIRES: the host runs BF16 (CpuPrecisionFor); CHECK-fails otherwise.
void GemmBf16(bool trans_b, int64_t m, int64_t n, int64_t k, const uint16_t* a, int64_t lda,
              const uint16_t* b, int64_t ldb, bool accumulate, float* c, int64_t ldc);

// out[m, n] (+)= a[m, k] · w[n, k]ᵀ with BF16 inputs and F32 accumulation
// and output; `accumulate` adds to out instead of overwriting it. All
// operands dense (lda = k, ldw = k, ldo = n).
// REQUIRES: the host runs BF16 (CpuPrecisionFor); CHECK-fails otherwise.
void MatmulBf16(const uint16_t* a, const uint16_t* w, int64_t m, int64_t n, int64_t k,
                bool accumulate, float* out);

// acc[m, n] = a[m, k] · w[n, k]ᵀ exactly, U8 × S8 → S32. Dense operands.
// REQUIRES: the host runs INT8 (CpuPrecisionFor); CHECK-fails otherwise.
void MatmulU8S8(const uint8_t* a, const int8_t* w, int64_t m, int64_t n, int64_t k,
                int32_t* acc);

}  // namespace neodb::encoder::ops::cpu
