#include "encoder/ops/pooling.h"

#include "encoder/ops/op_checks.h"

namespace neodb::encoder::ops {

void Pool(const Tensor& hidden, const std::vector<int64_t>& offsets, Pooling pooling, Tensor* out) {
  NEODB_CHECK(hidden.rank() == 2 && !offsets.empty() && offsets.front() == 0);
  const int64_t n = hidden.dim(0);
  const int64_t cols = hidden.dim(1);
  const int64_t batch = static_cast<int64_t>(offsets.size()) - 1;
  NEODB_CHECK(offsets.back() == n);
  for (int64_t b = 0; b < batch; ++b) NEODB_CHECK(offsets[b + 1] > offsets[b]);
  internal::CheckF32(hidden, {n, cols}, "Pool.hidden");
  internal::CheckF32(*out, {batch, cols}, "Pool.out");
  internal::CheckDevice(hidden.device(), *out);
  switch (hidden.device()) {
    case Device::kCpu:
      return cpu::Pool(hidden.data<float>(), cols, offsets.data(), batch, pooling,
                       out->data<float>());
    default:
      internal::NoBody("Pool", hidden.device());
  }
}

}  // namespace neodb::encoder::ops
