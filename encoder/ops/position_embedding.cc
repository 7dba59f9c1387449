#include "encoder/ops/position_embedding.h"

#include "encoder/ops/op_checks.h"

namespace neodb::encoder::ops {

void AddPositionEmbedding(const Tensor& table, const std::vector<int64_t>& offsets, Tensor* out) {
  NEODB_CHECK(table.rank() == 2 && !offsets.empty() && offsets.front() == 0);
  const int64_t positions = table.dim(0);
  const int64_t cols = table.dim(1);
  internal::CheckF32(table, {positions, cols}, "AddPositionEmbedding.table");
  internal::CheckF32(*out, {offsets.back(), cols}, "AddPositionEmbedding.out");
  internal::CheckDevice(table.device(), *out);
  for (size_t b = 0; b + 1 < offsets.size(); ++b) {
    NEODB_CHECK(offsets[b + 1] >= offsets[b] && offsets[b + 1] - offsets[b] <= positions);
  }
  switch (table.device()) {
    case Device::kCpu:
      return cpu::AddPositionEmbedding(table.data<float>(), cols, offsets.data(),
                                       static_cast<int64_t>(offsets.size()) - 1,
                                       out->data<float>());
    default:
      internal::NoBody("AddPositionEmbedding", table.device());
  }
}

}  // namespace neodb::encoder::ops
