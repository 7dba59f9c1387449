#include "index/dot_kernel.h"

namespace neodb::index {
namespace {

constexpr int kLanes = 16;

// Sixteen independent accumulators: each lane is its own sum, so the compiler
// may vectorise without reassociating floating-point additions.
[[gnu::always_inline]] inline float Dot(const float* a, const float* b, int dim) {
  float acc[kLanes] = {};
  int i = 0;
  for (; i + kLanes <= dim; i += kLanes) {
    for (int j = 0; j < kLanes; ++j) acc[j] += a[i + j] * b[i + j];
  }
  float tail = 0;
  for (; i < dim; ++i) tail += a[i] * b[i];
  float s = 0;
  for (int j = 0; j < kLanes; ++j) s += acc[j];
  return s + tail;
}

}  // namespace

[[gnu::target_clones("arch=skylake-avx512", "arch=haswell", "default")]] void DotRows(
    const float* x, size_t rows, int dim, const float* q, float* scores) {
  for (size_t r = 0; r < rows; ++r) scores[r] = Dot(x + r * dim, q, dim);
}

[[gnu::target_clones("arch=skylake-avx512", "arch=haswell", "default")]] float SquaredNormKernel(
    const float* v, int dim) {
  return Dot(v, v, dim);
}

}  // namespace neodb::index
