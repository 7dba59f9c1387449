#include "encoder/ops/swiglu.h"

#include "encoder/ops/op_checks.h"

namespace neodb::encoder::ops {

void SwiGlu(const Tensor& u, Tensor* out) {
  NEODB_CHECK(u.rank() == 2 && u.dim(1) % 2 == 0);
  const int64_t rows = u.dim(0);
  const int64_t f = u.dim(1) / 2;
  internal::CheckF32(u, {rows, 2 * f}, "SwiGlu.u");
  internal::CheckF32(*out, {rows, f}, "SwiGlu.out");
  internal::CheckDevice(u.device(), *out);
  switch (u.device()) {
    case Device::kCpu:
      return cpu::SwiGlu(u.data<float>(), rows, f, out->data<float>());
    default:
      internal::NoBody("SwiGlu", u.device());
  }
}

}  // namespace neodb::encoder::ops
