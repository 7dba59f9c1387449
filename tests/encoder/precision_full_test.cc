// BF16 and INT8 against F32 on a random full-size NeoBERT (28 × 768, the
// released architecture, NEOBERT.md §1; `neodb model init --preset full`
// weights), mixed lengths up to 3,000 tokens, both poolings: BF16 cosine ≥
// 0.999 and INT8 ≥ 0.99 per vector (issue 16). Prints the distributions.
// Labelled slow: about a minute of two cores.
#include <memory>
#include <string>
#include <vector>

#include "encoder/checkpoint/presets.h"
#include "encoder/ops/cpu_kernels.h"
#include "gtest/gtest.h"
#include "tests/encoder/precision_test_util.h"

namespace neodb::encoder {
namespace {

TEST(PrecisionFullTest, FullSizeRandomCheckpoint) {
  std::string why_bf16, why_int8;
  const bool bf16 = CpuPrecisionFor(Precision::kBf16, &why_bf16) == Precision::kBf16;
  const bool int8 = CpuPrecisionFor(Precision::kInt8, &why_int8) == Precision::kInt8;
  if (!bf16 && !int8) GTEST_SKIP() << why_bf16 << "; " << why_int8;
  auto config = PresetConfig("full", 30522);
  ASSERT_TRUE(config.ok());
  auto weights = std::make_shared<const NeoBertWeights>(RandomWeights(*config, 1, false));
  const PackedBatch batch =
      testing::MixedBatch(config->vocab_size, {1, 5, 16, 100, 128, 333, 512, 1000, 3000}, 17);
  const int64_t dim = config->hidden_size;
  const std::vector<Tensor> want =
      testing::PoolBoth(*MakeCpuBackend(weights, 2, Precision::kF32), batch, dim);
  for (auto [p, threshold] :
       {std::pair{Precision::kBf16, 0.999}, std::pair{Precision::kInt8, 0.99}}) {
    if (CpuPrecisionFor(p, nullptr) != p) continue;
    const std::string what = "full " + std::string(PrecisionName(p));
    const std::vector<Tensor> got = testing::PoolBoth(*MakeCpuBackend(weights, 2, p), batch, dim);
    testing::Report(what.c_str(), testing::Compare(want, got, batch, dim, threshold, what));
  }
}

}  // namespace
}  // namespace neodb::encoder
