#pragma once
// Single-query inner products over a row-major matrix, compiled for AVX-512,
// AVX2+FMA and baseline x86-64 with run-time dispatch (GCC target_clones).
// Why not cblas_sgemv: Debian's pthread OpenBLAS spins (sched_yield) when
// several threads call it at once, which is exactly the serving pattern
// (concurrent single queries); and why not FAISS: Debian builds it without
// AVX2. See bench/README.md ## Index. Thread-safe (pure function).

#include <cstddef>

namespace neodb::index {

// scores[r] = <x + r * dim, q> for r in [0, rows).
void DotRows(const float* x, size_t rows, int dim, const float* q, float* scores);

// sum_i v[i]^2.
float SquaredNormKernel(const float* v, int dim);

}  // namespace neodb::index
