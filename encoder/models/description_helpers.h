#pragma once
// What the model descriptions (models/*.cc) share: views into a backend's
// scratch buffers (the per-head q, k, v among them), the low-precision
// copies of each layer's projections, and a projection in the backend's
// precision.

#include <utility>
#include <vector>

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

// Per-head views [heads, n, head_dim] of q, k and v, one after another in
// `buffer` (where ops::SplitQkv and ops::SplitQkvRope write them).
struct HeadViews {
  Tensor q, k, v;
};
inline HeadViews SplitHeadViews(Tensor& buffer, int64_t heads, int64_t n, int64_t head_dim) {
  const int64_t per_head = heads * n * head_dim;
  return {ScratchView(buffer, 0, {heads, n, head_dim}),
          ScratchView(buffer, per_head, {heads, n, head_dim}),
          ScratchView(buffer, 2 * per_head, {heads, n, head_dim})};
}

// The low-precision copies, made at load, of the projections `members`
// (pointers to weight tensors) of every layer, into LowLayer's members in
// that order; none in F32, where Project runs SGEMM on the weights.
template <typename LowLayer, typename Layer, typename... Members>
std::vector<LowLayer> MakeLowPrecisionLayers(const std::vector<Layer>& layers,
                                             Precision precision, Members... members) {
  std::vector<LowLayer> low;
  if (precision == Precision::kF32) return low;
  for (const Layer& l : layers) {
    low.push_back({ops::LowPrecisionLinear::Make(l.*members, precision)...});
  }
  return low;
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
