#include "encoder/ops/parallel_cpu.h"

#include <omp.h>

#include <algorithm>

namespace neodb::encoder::ops::cpu {

void ParallelFor(int64_t n, int64_t grain, int max_workers,
                 const std::function<void(int64_t, int64_t, int)>& body) {
  if (n <= 0) return;
  grain = std::max<int64_t>(grain, 1);
  const int64_t chunks = (n + grain - 1) / grain;
  const int workers = static_cast<int>(
      std::min<int64_t>({chunks, int64_t{max_workers}, int64_t{omp_get_max_threads()}}));
  if (workers <= 1 || omp_in_parallel()) {
    body(0, n, 0);
    return;
  }
  // Dynamic: chunks may cost different amounts (sequences of different
  // lengths), and a core may be busy with another request's work.
#pragma omp parallel num_threads(workers)
  {
    const int worker = omp_get_thread_num();
#pragma omp for schedule(dynamic, 1)
    for (int64_t c = 0; c < chunks; ++c) {
      body(c * grain, std::min(n, (c + 1) * grain), worker);
    }
  }
}

int MaxParallelWorkers() { return omp_get_max_threads(); }

void ParallelRows(int64_t rows, int64_t floats_per_row,
                  const std::function<void(int64_t, int64_t)>& body) {
  constexpr int64_t kChunkFloats = 16 << 10;
  const int64_t grain = std::max<int64_t>(1, kChunkFloats / std::max<int64_t>(floats_per_row, 1));
  ParallelFor(rows, grain, MaxParallelWorkers(),
              [&](int64_t begin, int64_t end, int) { body(begin, end); });
}

}  // namespace neodb::encoder::ops::cpu
