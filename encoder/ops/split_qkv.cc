#include "encoder/ops/split_qkv.h"

#include "encoder/ops/op_checks.h"
#include "encoder/ops/parallel_cpu.h"

namespace neodb::encoder::ops {

void SplitQkv(const Tensor& qkv, const Tensor& bias, int64_t num_heads, Tensor* q, Tensor* k,
              Tensor* v) {
  NEODB_CHECK(qkv.rank() == 2 && num_heads > 0 && qkv.dim(1) % (3 * num_heads) == 0);
  const int64_t n = qkv.dim(0);
  const int64_t head_dim = qkv.dim(1) / (3 * num_heads);
  internal::CheckF32(qkv, {n, 3 * num_heads * head_dim}, "SplitQkv.qkv");
  internal::CheckF32(bias, {3 * num_heads * head_dim}, "SplitQkv.bias");
  internal::CheckF32(*q, {num_heads, n, head_dim}, "SplitQkv.q");
  internal::CheckF32(*k, {num_heads, n, head_dim}, "SplitQkv.k");
  internal::CheckF32(*v, {num_heads, n, head_dim}, "SplitQkv.v");
  internal::CheckDevice(qkv.device(), bias, *q, *k, *v);
  switch (qkv.device()) {
    case Device::kCpu:
      return cpu::ParallelRows(n, 3 * num_heads * head_dim, [&](int64_t begin, int64_t end) {
        cpu::SplitQkv(qkv.data<float>(), bias.data<float>(), n, num_heads, head_dim,
                      q->data<float>(), k->data<float>(), v->data<float>(), begin, end);
      });
    default:
      internal::NoBody("SplitQkv", qkv.device());
  }
}

}  // namespace neodb::encoder::ops
