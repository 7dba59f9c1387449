#include "encoder/ops/swiglu.h"

#include "encoder/ops/op_checks.h"
#include "encoder/ops/parallel_cpu.h"

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
      return cpu::ParallelRows(rows, 3 * f, [&](int64_t begin, int64_t end) {
        cpu::SwiGlu(u.data<float>() + begin * 2 * f, end - begin, f,
                    out->data<float>() + begin * f);
      });
    default:
      internal::NoBody("SwiGlu", u.device());
  }
}

}  // namespace neodb::encoder::ops
