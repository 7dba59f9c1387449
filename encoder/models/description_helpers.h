#pragma once
// What the model descriptions (models/*.cc) share: views into a backend's
// scratch buffers, and a projection in the backend's precision.

#include <utility>

#include "encoder/backend.h"
#include "encoder/core/tensor.h"
#include "encoder/ops/linear.h"
#include "encoder/ops/low_precision_linear.h"

namespace neodb::encoder::models {

// An F32 view of `buffer`'s elements [offset, offset + numel(shape)).
inline Tensor ScratchView(Tensor& buffer, int64_t offset, Shape shape) {
  Tensor t = Tensor::Borrow(buffer.data<float>() + offset, std::move(shape), DType::kF32,
                            Device::kCpu, nullptr);
  NEODB_CHECK(offset + t.numel() <= buffer.numel());
  return t;
}

// out (+)= in · wᵀ: SGEMM in F32, else through `low` (w converted at load).
inline void Project(Precision precision, const Tensor& in, const Tensor& w,
                    const ops::LowPrecisionLinear& low, bool accumulate, Tensor* out,
                    ops::LowPrecisionScratch* scratch) {
  if (precision == Precision::kF32) return ops::Linear(in, w, accumulate, out);
  NEODB_CHECK(in.dim(1) == low.in_features() && out->dim(1) == low.out_features());
  low.Apply(in.data<float>(), in.dim(0), accumulate, out->data<float>(), scratch);
}

}  // namespace neodb::encoder::models
