#include "index/ivfpq_index.h"

#include <gtest/gtest.h>

#include <string>
#include <unordered_map>

#include "index/index_factory.h"
#include "tests/index/test_util.h"

namespace neodb::index {
namespace {

const bool kSingleThreadedBuilds = testing::UseSingleThreadedBuilds();

using testing::BruteForce;
using testing::ExpectExactTopK;
using testing::FnFilter;
using testing::Iota;
using testing::RandomVectors;

constexpr int kDim = 32;

TEST(IvfPqTest, ExactUntilTrainedThenApproximate) {
  IvfPqIndex index(kDim, 16, 8, Metric::kL2);
  ASSERT_EQ(index.TrainThreshold(), 624u);
  auto base = RandomVectors(3000, kDim, 21);
  auto ids = Iota(3000, 10);
  // Before training: exact answers from the flat buffer.
  std::vector<float> first(base.begin(), base.begin() + 500 * kDim);
  std::vector<int64_t> first_ids(ids.begin(), ids.begin() + 500);
  ASSERT_TRUE(index.Add(first_ids, first).ok());
  EXPECT_FALSE(index.trained());
  auto queries = RandomVectors(20, kDim, 22);
  auto res = index.Search(queries, 5);
  ASSERT_TRUE(res.ok());
  for (int q = 0; q < 20; ++q) {
    const float* query = &queries[q * kDim];
    auto want = BruteForce(first, first_ids, kDim, query, 5, Metric::kL2);
    auto all = BruteForce(first, first_ids, kDim, query, first_ids.size(), Metric::kL2);
    std::unordered_map<int64_t, double> exact;
    for (const auto& h : all) exact[h.id] = h.score;
    ExpectExactTopK(
        (*res)[q], want, [&](int64_t id) { return exact.at(id); },
        [](double s) { return 1e-3 * (1 + std::abs(s)); }, "query " + std::to_string(q));
  }
  // Reaching the threshold trains; the rest is added to the IVF lists.
  ASSERT_TRUE(index
                  .Add(std::span<const int64_t>(ids).subspan(500),
                       std::span<const float>(base).subspan(500 * kDim))
                  .ok());
  EXPECT_TRUE(index.trained());
  EXPECT_EQ(index.size(), 3000u);
  EXPECT_EQ(index.Ids(), ids);
  // Self-retrieval: a stored vector's nearest neighbour is itself (PQ error is
  // small next to the gap between random vectors).
  SearchOptions all_lists;
  all_lists.nprobe = 16;
  int self_hits = 0;
  for (int i = 0; i < 200; ++i) {
    auto r =
        index.Search(std::span<const float>(&base[i * 15 * kDim], kDim), 1, nullptr, all_lists);
    ASSERT_TRUE(r.ok());
    self_hits += (*r)[0][0].id == ids[i * 15];
  }
  EXPECT_GE(self_hits, 180);
  EXPECT_EQ(index.Add(std::vector<int64_t>{10}, std::vector<float>(kDim, 1.0f)).code(),
            absl::StatusCode::kAlreadyExists);
}

TEST(IvfPqTest, FiltersRemovalAndSerializationAfterTraining) {
  IvfPqIndex index(kDim, 16, 8, Metric::kCosine);
  auto base = RandomVectors(2000, kDim, 23);
  ASSERT_TRUE(index.Add(Iota(2000), base).ok());
  ASSERT_TRUE(index.trained());
  auto queries = RandomVectors(10, kDim, 24);
  // Selective filter: only 4 allowed ids; each query must get all 4 even though
  // the default nprobe cannot see every list.
  FnFilter four([](int64_t id) { return id == 1 || id == 600 || id == 1200 || id == 1999; });
  auto res = index.Search(queries, 10, &four);
  ASSERT_TRUE(res.ok());
  for (const auto& hits : *res) {
    EXPECT_EQ(hits.size(), 4u);
    for (const auto& h : hits) EXPECT_TRUE(four.Allowed(h.id));
  }
  ASSERT_EQ(*index.Remove(std::vector<int64_t>{600, 1200, 424242}), 2u);
  res = index.Search(queries, 10, &four);
  for (const auto& hits : *res) EXPECT_EQ(hits.size(), 2u);
  EXPECT_FALSE(index.Contains(600));

  auto bytes = index.Serialize();
  ASSERT_TRUE(bytes.ok());
  auto back = DeserializeIndex(*bytes);
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ((*back)->spec(), "IVF16,PQ8");
  EXPECT_EQ((*back)->Ids(), index.Ids());
  auto a = index.Search(queries, 5);
  auto b = (*back)->Search(queries, 5);
  for (int q = 0; q < 10; ++q) {
    for (int i = 0; i < 5; ++i) EXPECT_EQ((*a)[q][i].id, (*b)[q][i].id);
  }
}

TEST(IvfPqTest, UntrainedSerializationRoundTrip) {
  auto index = *MakeIndex("IVF64,PQ4", kDim, Metric::kInnerProduct);
  ASSERT_TRUE(index->Add(Iota(100), RandomVectors(100, kDim, 25)).ok());
  auto back = DeserializeIndex(*index->Serialize());
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ((*back)->size(), 100u);
  EXPECT_NE((*back)->DebugString().find("untrained"), std::string::npos);
}

}  // namespace
}  // namespace neodb::index
