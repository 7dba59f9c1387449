#include "encoder/ops/embedding.h"

#include "encoder/ops/op_checks.h"

namespace neodb::encoder::ops {

void Embedding(const Tensor& table, const std::vector<int32_t>& ids, Tensor* out) {
  NEODB_CHECK(table.rank() == 2);
  const int64_t vocab = table.dim(0);
  const int64_t cols = table.dim(1);
  const int64_t n = static_cast<int64_t>(ids.size());
  internal::CheckF32(table, {vocab, cols}, "Embedding.table");
  internal::CheckF32(*out, {n, cols}, "Embedding.out");
  internal::CheckDevice(table.device(), *out);
  for (int32_t id : ids) NEODB_CHECK(id >= 0 && id < vocab);
  switch (table.device()) {
    case Device::kCpu:
      return cpu::Embedding(table.data<float>(), cols, ids.data(), n, out->data<float>());
    default:
      internal::NoBody("Embedding", table.device());
  }
}

}  // namespace neodb::encoder::ops
