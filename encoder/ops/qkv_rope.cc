#include "encoder/ops/qkv_rope.h"

#include <cmath>

#include "encoder/ops/op_checks.h"
#include "encoder/ops/parallel_cpu.h"

namespace neodb::encoder::ops {

RopeTable MakeRopeTable(int64_t max_positions, int64_t head_dim, double theta) {
  NEODB_CHECK(head_dim > 0 && head_dim % 2 == 0 && max_positions > 0);
  const int64_t half = head_dim / 2;
  std::vector<float> inv_freq(half);
  for (int64_t i = 0; i < half; ++i) {
    const float exponent = static_cast<float>(2 * i) / static_cast<float>(head_dim);
    inv_freq[i] = static_cast<float>(1.0 / std::pow(theta, static_cast<double>(exponent)));
  }
  RopeTable table{Tensor::Empty({max_positions, half}, DType::kF32),
                  Tensor::Empty({max_positions, half}, DType::kF32)};
  float* c = table.cos.data<float>();
  float* s = table.sin.data<float>();
  for (int64_t p = 0; p < max_positions; ++p) {
    for (int64_t i = 0; i < half; ++i) {
      const float angle = static_cast<float>(p) * inv_freq[i];
      c[p * half + i] = static_cast<float>(std::cos(static_cast<double>(angle)));
      s[p * half + i] = static_cast<float>(std::sin(static_cast<double>(angle)));
    }
  }
  return table;
}

void SplitQkvRope(const Tensor& qkv, const std::vector<int64_t>& offsets, int64_t num_heads,
                  const RopeTable& rope, Tensor* q, Tensor* k, Tensor* v) {
  const int64_t d = rope.head_dim();
  NEODB_CHECK(qkv.rank() == 2 && !offsets.empty() && offsets.front() == 0);
  const int64_t n = qkv.dim(0);
  NEODB_CHECK(offsets.back() == n);
  for (size_t b = 0; b + 1 < offsets.size(); ++b) {
    const int64_t len = offsets[b + 1] - offsets[b];
    NEODB_CHECK(len >= 0 && len <= rope.max_positions());
  }
  internal::CheckF32(qkv, {n, 3 * num_heads * d}, "SplitQkvRope.qkv");
  internal::CheckF32(*q, {num_heads, n, d}, "SplitQkvRope.q");
  internal::CheckF32(*k, {num_heads, n, d}, "SplitQkvRope.k");
  internal::CheckF32(*v, {num_heads, n, d}, "SplitQkvRope.v");
  internal::CheckDevice(qkv.device(), *q, *k, *v);
  switch (qkv.device()) {
    case Device::kCpu: {
      // Sequences on every GEMM thread (ops/parallel_cpu.h).
      const int64_t batch = static_cast<int64_t>(offsets.size()) - 1;
      return cpu::ParallelFor(batch, 1, cpu::MaxParallelWorkers(),
                              [&](int64_t begin, int64_t end, int) {
                                cpu::SplitQkvRope(qkv.data<float>(), offsets.data(), batch,
                                                  num_heads, d, rope.cos.data<float>(),
                                                  rope.sin.data<float>(), q->data<float>(),
                                                  k->data<float>(), v->data<float>(), begin, end);
                              });
    }
    default:
      internal::NoBody("SplitQkvRope", qkv.device());
  }
}

}  // namespace neodb::encoder::ops
