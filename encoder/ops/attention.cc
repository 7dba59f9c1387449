#include "encoder/ops/attention.h"

#include <algorithm>

#include "encoder/ops/op_checks.h"

namespace neodb::encoder::ops {
namespace {
// Score block budget in floats (4 MiB). Measured on Zen 4 at T = 4096: 64 Ki
// floats 80% of the SGEMM rate, 256 Ki 86%, 1 Mi 88% — bigger GEMMs win over
// L2 residency of the block.
constexpr int64_t kScoreBudget = 1024 * 1024;
constexpr int64_t kMinRows = 32;
}  // namespace

int64_t AttentionScoreRows(int64_t len) {
  return std::min(len, std::max(kMinRows, kScoreBudget / std::max<int64_t>(len, 1)));
}

int64_t LongestSequence(const int64_t* offsets, int64_t batch) {
  int64_t longest = 0;
  for (int64_t b = 0; b < batch; ++b) longest = std::max(longest, offsets[b + 1] - offsets[b]);
  return longest;
}

int64_t AttentionScratchSize(int64_t max_len) {
  // For every len ≤ max_len the score block rows(len)·len is at most
  // max(min(len², budget), kMinRows·len) ≤ the first term below; the row
  // sums need rows(len) ≤ max_len more.
  return std::max(std::min(max_len * max_len, kScoreBudget), kMinRows * max_len) + max_len;
}

void Attention(const Tensor& q, const Tensor& k, const Tensor& v,
               const std::vector<int64_t>& offsets, float scale, Tensor* scratch, Tensor* out) {
  NEODB_CHECK(q.rank() == 3 && !offsets.empty() && offsets.front() == 0);
  const int64_t heads = q.dim(0);
  const int64_t n = q.dim(1);
  const int64_t d = q.dim(2);
  internal::CheckF32(q, {heads, n, d}, "Attention.q");
  internal::CheckF32(k, {heads, n, d}, "Attention.k");
  internal::CheckF32(v, {heads, n, d}, "Attention.v");
  internal::CheckF32(*out, {n, heads * d}, "Attention.out");
  NEODB_CHECK(offsets.back() == n && scratch->dtype() == DType::kF32);
  int64_t longest = 0;
  for (size_t b = 0; b + 1 < offsets.size(); ++b) {
    NEODB_CHECK(offsets[b + 1] >= offsets[b]);
    longest = std::max(longest, offsets[b + 1] - offsets[b]);
  }
  NEODB_CHECK(scratch->numel() >= AttentionScratchSize(longest));
  internal::CheckDevice(q.device(), k, v, *scratch, *out);
  switch (q.device()) {
    case Device::kCpu:
      return cpu::Attention(q.data<float>(), k.data<float>(), v.data<float>(), offsets.data(),
                            static_cast<int64_t>(offsets.size()) - 1, heads, d, scale,
                            scratch->data<float>(), scratch->numel(), out->data<float>());
    default:
      internal::NoBody("Attention", q.device());
  }
}

}  // namespace neodb::encoder::ops
