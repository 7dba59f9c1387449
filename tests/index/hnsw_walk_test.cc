// The HNSW graph walk (index/hnsw_walk.h) through HnswIndex: exact on small
// graphs when the beam covers every node, filters and tombstones honoured,
// min(k, #allowed) hits, recall at the default beam, and the scattered-row
// dot kernel it uses.
#include "index/hnsw_walk.h"

#include <gtest/gtest.h>

#include <random>
#include <string>
#include <unordered_map>
#include <unordered_set>

#include "index/dot_kernel.h"
#include "index/hnsw_index.h"
#include "tests/index/test_util.h"

namespace neodb::index {
namespace {

const bool kSingleThreadedBuilds = testing::UseSingleThreadedBuilds();

using testing::BruteForce;
using testing::ExpectExactTopK;
using testing::FnFilter;
using testing::Iota;
using testing::RandomVectors;
using testing::Recall;

TEST(DotRowsAtTest, EqualsDotRowsOfEachRow) {
  for (int dim : {1, 7, 16, 33, 256}) {
    const auto x = RandomVectors(50, dim, 3);
    const auto q = RandomVectors(1, dim, 4);
    std::vector<int32_t> rows = {49, 0, 17, 17, 3, 48};
    std::vector<float> got(rows.size());
    DotRowsAt(x.data(), rows.data(), rows.size(), dim, q.data(), got.data());
    for (size_t i = 0; i < rows.size(); ++i) {
      float want;
      DotRows(x.data() + rows[i] * dim, 1, dim, q.data(), &want);
      EXPECT_EQ(got[i], want) << "dim " << dim << " row " << rows[i];
    }
  }
  DotRowsAt(nullptr, nullptr, 0, 8, nullptr, nullptr);  // n = 0 touches nothing
}

// With a beam at least the number of nodes, the walk expands every node it
// can reach, so (level 0 being connected) it is exact: brute force over the
// allowed live vectors, for every metric, with tombstones and filters of
// several densities, through the walk (exact_below 0; every density here
// is above the exact-scan threshold of 5%).
TEST(HnswWalkTest, FullBeamEqualsBruteForceWithFiltersAndTombstones) {
  constexpr int kDim = 16;
  constexpr size_t kN = 600;
  constexpr int kQueries = 20;
  const auto base = RandomVectors(kN, kDim, 21);
  const auto ids = Iota(kN, 1);
  const auto queries = RandomVectors(kQueries, kDim, 22);
  for (Metric metric : {Metric::kL2, Metric::kInnerProduct, Metric::kCosine}) {
    HnswIndex index(kDim, 8, metric);
    index.set_exact_below(0);
    ASSERT_TRUE(index.Add(ids, base).ok());
    std::vector<int64_t> removed;
    for (int64_t id = 1; id <= static_cast<int64_t>(kN); id += 7) removed.push_back(id);
    ASSERT_EQ(*index.Remove(removed), removed.size());
    const std::unordered_set<int64_t> gone(removed.begin(), removed.end());
    for (int modulus : {1, 2, 3, 10}) {
      auto allowed = [&](int64_t id) { return id % modulus == 0 && !gone.count(id); };
      FnFilter filter([modulus](int64_t id) { return id % modulus == 0; });
      SearchOptions options;
      options.ef_search = static_cast<int>(kN);
      for (int k : {1, 10, 50}) {
        auto res = index.Search(queries, k, modulus == 1 ? nullptr : &filter, options);
        ASSERT_TRUE(res.ok()) << res.status();
        for (int q = 0; q < kQueries; ++q) {
          const float* query = &queries[q * kDim];
          auto want = BruteForce(base, ids, kDim, query, k, metric, allowed);
          auto all = BruteForce(base, ids, kDim, query, kN, metric);
          std::unordered_map<int64_t, double> exact;
          for (const auto& h : all) exact[h.id] = h.score;
          ExpectExactTopK((*res)[q], want, [&](int64_t id) { return exact.at(id); },
                          [](double s) { return 1e-4 * (1 + std::abs(s)); },
                          std::string(MetricName(metric)) + " 1/" + std::to_string(modulus) +
                              " k " + std::to_string(k) + " query " + std::to_string(q));
          for (const auto& h : (*res)[q]) EXPECT_TRUE(allowed(h.id)) << h.id;
        }
      }
    }
  }
}

class HnswWalkRecallTest : public ::testing::Test {
 protected:
  static constexpr int kDim = 32;
  static constexpr size_t kN = 10000;
  static constexpr int kQueries = 100;
  static void SetUpTestSuite() {
    base_ = new std::vector<float>(RandomVectors(kN, kDim, 31));
    queries_ = new std::vector<float>(RandomVectors(kQueries, kDim, 32));
    index_ = new HnswIndex(kDim, 32, Metric::kInnerProduct);
    index_->set_exact_below(0);
    EXPECT_TRUE(index_->Add(Iota(kN, 1), *base_).ok());
  }
  static void TearDownTestSuite() {
    delete base_;
    delete queries_;
    delete index_;
  }
  static std::vector<float>* base_;
  static std::vector<float>* queries_;
  static HnswIndex* index_;
};
std::vector<float>* HnswWalkRecallTest::base_;
std::vector<float>* HnswWalkRecallTest::queries_;
HnswIndex* HnswWalkRecallTest::index_;

// The filtered walk keeps ef allowed nodes, so a filter needs no wider beam:
// recall@10 at the default ef stays high at 30% and 10% allowed, and every
// query returns k hits.
TEST_F(HnswWalkRecallTest, FilteredRecallAtDefaultBeam) {
  const auto ids = Iota(kN, 1);
  for (int modulus : {1, 3, 10}) {
    auto allowed = [modulus](int64_t id) { return id % modulus == 0; };
    FnFilter filter(allowed);
    auto res = index_->Search(*queries_, 10, modulus == 1 ? nullptr : &filter);
    ASSERT_TRUE(res.ok());
    double sum = 0;
    for (int q = 0; q < kQueries; ++q) {
      EXPECT_EQ((*res)[q].size(), 10u);
      for (const auto& h : (*res)[q]) EXPECT_TRUE(allowed(h.id)) << h.id;
      sum += Recall((*res)[q], BruteForce(*base_, ids, kDim, &(*queries_)[q * kDim], 10,
                                          Metric::kInnerProduct, allowed));
    }
    EXPECT_GE(sum / kQueries, 0.95) << "1/" << modulus;
  }
}

// Fewer allowed ids than k, yet above the exact-scan threshold: the walk
// reaches them all (or the exact fallback does); exactly min(k, #allowed).
TEST_F(HnswWalkRecallTest, FilteredQueryReturnsMinOfKAndMatches) {
  FnFilter six_percent([](int64_t id) { return id % 100 < 6; });  // 600 ids
  auto res =
      index_->Search(std::span<const float>(*queries_).subspan(0, 5 * kDim), 1000, &six_percent);
  ASSERT_TRUE(res.ok());
  for (const auto& hits : *res) {
    EXPECT_EQ(hits.size(), 600u);
    std::unordered_set<int64_t> seen;
    for (const auto& h : hits) {
      EXPECT_LT(h.id % 100, 6) << h.id;
      EXPECT_TRUE(seen.insert(h.id).second) << h.id;
    }
  }
  res = index_->Search(std::span<const float>(*queries_).subspan(0, 5 * kDim), 100, &six_percent);
  for (const auto& hits : *res) EXPECT_EQ(hits.size(), 100u);
}

}  // namespace
}  // namespace neodb::index
