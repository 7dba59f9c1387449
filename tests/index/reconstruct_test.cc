// VectorIndex::Reconstruct, what Verify compares stored vectors with: every
// kind gives back exactly what it holds (normalised for cosine) before and
// after a serialisation round trip (a snapshot), NOT_FOUND for removed or
// absent ids, INVALID_ARGUMENT for a wrong size, and a trained IVF-PQ, which
// keeps only codes, UNIMPLEMENTED rather than an approximation.
#include <cmath>

#include "gtest/gtest.h"
#include "index/exact_search.h"
#include "index/index_factory.h"
#include "tests/index/test_util.h"

namespace neodb::index {
namespace {

using testing::Iota;
using testing::RandomVectors;

const bool kSingleThreaded = testing::UseSingleThreadedBuilds();
constexpr int kDim = 16;

void ExpectHolds(const VectorIndex& index, const std::vector<float>& v, size_t n, bool normalise) {
  std::vector<float> want = v;
  if (normalise) NormalizeRows(want.data(), n, kDim);
  std::vector<float> got(kDim);
  for (size_t i = 0; i < n; ++i) {
    ASSERT_TRUE(index.Reconstruct(static_cast<int64_t>(i), got).ok()) << index.spec() << " " << i;
    for (int j = 0; j < kDim; ++j) ASSERT_EQ(got[j], want[i * kDim + j]) << index.spec();
  }
}

class ReconstructEachKind : public ::testing::TestWithParam<std::tuple<const char*, Metric>> {};

TEST_P(ReconstructEachKind, GivesBackWhatItHolds) {
  const auto [spec, metric] = GetParam();
  auto index = MakeIndex(spec, kDim, metric);
  ASSERT_TRUE(index.ok()) << index.status();
  const size_t n = 100;  // below IVF's training threshold: its buffer is exact
  const std::vector<float> v = RandomVectors(n, kDim, 3);
  ASSERT_TRUE((*index)->Add(Iota(n), v).ok());
  ExpectHolds(**index, v, n, metric == Metric::kCosine);
  auto bytes = (*index)->Serialize();
  ASSERT_TRUE(bytes.ok());
  auto again = DeserializeIndex(*bytes);
  ASSERT_TRUE(again.ok()) << again.status();
  ExpectHolds(**again, v, n, metric == Metric::kCosine);

  std::vector<float> out(kDim);
  ASSERT_TRUE((*index)->Remove(std::vector<int64_t>{7}).ok());
  EXPECT_TRUE(absl::IsNotFound((*index)->Reconstruct(7, out)));
  EXPECT_TRUE(absl::IsNotFound((*index)->Reconstruct(1000, out)));
  std::vector<float> small(kDim - 1);
  EXPECT_TRUE(absl::IsInvalidArgument((*index)->Reconstruct(1, small)));
}

INSTANTIATE_TEST_SUITE_P(Kinds, ReconstructEachKind,
                         ::testing::Combine(::testing::Values("Flat", "HNSW16", "IVF4,PQ4"),
                                            ::testing::Values(Metric::kCosine, Metric::kL2)));

TEST(Reconstruct, TrainedIvfPqSaysItCannot) {
  auto index = MakeIndex("IVF4,PQ4", kDim, Metric::kCosine);
  ASSERT_TRUE(index.ok());
  const size_t n = 300;  // past the training threshold (256)
  ASSERT_TRUE((*index)->Add(Iota(n), RandomVectors(n, kDim, 5)).ok());
  std::vector<float> out(kDim);
  EXPECT_TRUE(absl::IsUnimplemented((*index)->Reconstruct(3, out)));
  EXPECT_TRUE(absl::IsNotFound((*index)->Reconstruct(1000, out)));
}

}  // namespace
}  // namespace neodb::index
