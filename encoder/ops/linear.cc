#include "encoder/ops/linear.h"

#include "encoder/ops/op_checks.h"

namespace neodb::encoder::ops {

void Linear(const Tensor& x, const Tensor& w, bool accumulate, Tensor* out) {
  NEODB_CHECK(x.rank() == 2 && w.rank() == 2);
  const int64_t n = x.dim(0);
  const int64_t k = x.dim(1);
  const int64_t m = w.dim(0);
  internal::CheckF32(x, {n, k}, "Linear.x");
  internal::CheckF32(w, {m, k}, "Linear.w");
  internal::CheckF32(*out, {n, m}, "Linear.out");
  internal::CheckDevice(x.device(), w, *out);
  NEODB_CHECK(out->raw_data() != x.raw_data() && out->raw_data() != w.raw_data());
  switch (x.device()) {
    case Device::kCpu:
      return cpu::Linear(x.data<float>(), k, w.data<float>(), k, n, m, k, accumulate,
                         out->data<float>(), m);
    default:
      internal::NoBody("Linear", x.device());
  }
}

}  // namespace neodb::encoder::ops
