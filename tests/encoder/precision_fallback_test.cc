// A host without BF16 or VNNI instructions: `--precision bf16|int8` gives a
// message and exactly the F32 vectors. Registered with DNNL_MAX_CPU_ISA=AVX2,
// which caps oneDNN below both on any x86-64 CPU, so this runs everywhere.
#include <cstdlib>
#include <memory>
#include <string>

#include "encoder/encoder.h"
#include "encoder/ops/cpu_kernels.h"
#include "encoder/tokenizer/tokenizer.h"
#include "gtest/gtest.h"
#include "tests/encoder/test_weights.h"

namespace neodb::encoder {
namespace {

TEST(PrecisionFallbackTest, ReducedPrecisionFallsBackToF32WithAMessage) {
  ASSERT_NE(std::getenv("DNNL_MAX_CPU_ISA"), nullptr) << "run through CTest (sets DNNL_MAX_CPU_ISA)";
  for (Precision p : {Precision::kBf16, Precision::kInt8}) {
    std::string why;
    EXPECT_EQ(CpuPrecisionFor(p, &why), Precision::kF32);
    EXPECT_NE(why.find(std::string(PrecisionName(p)) + " needs"), std::string::npos) << why;
  }
  std::string why;
  EXPECT_EQ(CpuPrecisionFor(Precision::kF32, &why), Precision::kF32);
  EXPECT_TRUE(why.empty());
  EXPECT_NE(CpuKernelInfo().find("oneDNN"), std::string::npos);
}

TEST(PrecisionFallbackTest, FallbackBackendGivesTheF32Vectors) {
  auto config = testing::SmallConfig();
  auto weights = std::make_shared<const NeoBertWeights>(testing::TestWeights(config, 128, 4));
  PackedBatch batch;
  batch.Add({1, 5, 9, 33, 2});
  batch.Add({7, 8});
  auto f32 = MakeCpuBackend(weights, 1, Precision::kF32)->Pool(batch, Pooling::kMean);
  ASSERT_TRUE(f32.ok());
  const Precision fallback = CpuPrecisionFor(Precision::kInt8, nullptr);
  auto other = MakeCpuBackend(weights, 1, fallback)->Pool(batch, Pooling::kMean);
  ASSERT_TRUE(other.ok());
  for (int64_t i = 0; i < f32->numel(); ++i) EXPECT_EQ(f32->data<float>()[i], other->data<float>()[i]);
}

}  // namespace
}  // namespace neodb::encoder
