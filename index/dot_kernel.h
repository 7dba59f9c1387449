#pragma once
// Single-query inner products over a row-major matrix, compiled for AVX-512,
// AVX2+FMA and baseline x86-64 with run-time dispatch (GCC target_clones).
// Why not cblas_sgemv: Debian's pthread OpenBLAS spins (sched_yield) when
// several threads call it at once, which is exactly the serving pattern
// (concurrent single queries); and why not FAISS: Debian builds it without
// AVX2. See bench/README.md ## Index. Thread-safe (pure function).

#include <cstddef>
#include <cstdint>

namespace neodb::index {

// scores[r] = <x + r * dim, q> for r in [0, rows).
void DotRows(const float* x, size_t rows, int dim, const float* q, float* scores);

// scores[i] = <x + rows[i] * dim, q> for i in [0, n): scattered rows, as a
// graph walk asks for a node's neighbours. One dispatched call for all of
// them, and the rows a few places ahead are prefetched while one is summed
// (at 100k x 256-d the rows are far out of cache; the walk waits on memory).
// REQUIRES: every rows[i] >= 0 and within x's rows.
void DotRowsAt(const float* x, const int32_t* rows, size_t n, int dim, const float* q,
               float* scores);

// sum_i v[i]^2.
float SquaredNormKernel(const float* v, int dim);

// <a, b> and sum_i (a[i] - b[i])^2 of one pair: FAISS's HNSW inserts ask for
// one distance at a time (index/kernel_flat_storage.h).
float DotKernel(const float* a, const float* b, int dim);
float L2SqrKernel(const float* a, const float* b, int dim);

}  // namespace neodb::index
