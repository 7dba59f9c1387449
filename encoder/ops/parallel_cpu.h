#pragma once
// ParallelFor: the CPU ops' element-wise and per-sequence work on the same
// OpenMP threads as the GEMMs between them.
//
// Why: oneDNN spreads the GEMMs over every core SetGemmThreads names, but the
// ops between them (LayerNorm, GELU, the QKV split, attention's per-head
// matmuls and softmax) ran on the calling thread alone: 11% of a MiniLM text
// ingest's samples, during which the other cores waited (bench/peers).
//
// Every op split with it computes each row (or each sequence and head) exactly
// as the serial loop does, so the results do not depend on the thread count.

#include <cstdint>
#include <functional>

namespace neodb::encoder::ops::cpu {

// Runs body(begin, end, worker) over [0, n) in chunks of `grain` items (the
// last may be shorter), on at most `max_workers` threads and at most the
// calling thread's OpenMP thread count (SetGemmThreads); `worker` in
// [0, workers) names the thread, for per-thread scratch. Runs body(0, n, 0)
// on the calling thread when one chunk covers n, when one worker is allowed,
// or when called inside a parallel region already.
void ParallelFor(int64_t n, int64_t grain, int max_workers,
                 const std::function<void(int64_t begin, int64_t end, int worker)>& body);

// The row-wise ops' ParallelFor: body(begin, end) over rows [0, rows) of
// `floats_per_row` floats each (what one row reads and writes), in chunks of
// about 16k floats (64 KiB), so that a fork and join is a small part of a
// chunk; on every thread MaxParallelWorkers allows.
void ParallelRows(int64_t rows, int64_t floats_per_row,
                  const std::function<void(int64_t begin, int64_t end)>& body);

// Threads ParallelFor may use from this thread now (the OpenMP setting).
int MaxParallelWorkers();

}  // namespace neodb::encoder::ops::cpu
