#include "index/hnsw_index.h"

#include <gtest/gtest.h>

#include <atomic>
#include <random>
#include <string>
#include <thread>
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
using testing::Recall;

constexpr int kDim = 32;
constexpr size_t kN = 10000;
constexpr int kQueries = 100;

class HnswTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    base_ = new std::vector<float>(RandomVectors(kN, kDim, 11));
    ids_ = new std::vector<int64_t>(Iota(kN, 1));
    queries_ = new std::vector<float>(RandomVectors(kQueries, kDim, 12));
    // Built once and shared (read-only) by the tests below: building dominates.
    cosine_ = Build(Metric::kCosine).release();
    l2_ = Build(Metric::kL2).release();
  }
  static void TearDownTestSuite() {
    delete base_;
    delete ids_;
    delete queries_;
    delete cosine_;
    delete l2_;
  }
  static std::unique_ptr<HnswIndex> Build(Metric metric) {
    auto index = std::make_unique<HnswIndex>(kDim, 32, metric);
    index->set_exact_below(0);  // always walk the graph
    EXPECT_TRUE(index->Add(*ids_, *base_).ok());
    return index;
  }
  // A private mutable copy of a shared index (via Serialize, which also
  // exercises the round trip).
  static std::unique_ptr<HnswIndex> Copy(const HnswIndex& index) {
    auto back = DeserializeIndex(*index.Serialize());
    EXPECT_TRUE(back.ok()) << back.status();
    auto* hnsw = dynamic_cast<HnswIndex*>(back->release());
    hnsw->set_exact_below(0);
    return std::unique_ptr<HnswIndex>(hnsw);
  }
  double MeanRecall(const VectorIndex& index, Metric metric, const IdFilter* filter,
                    const std::function<bool(int64_t)>& allowed, size_t* short_results) {
    auto res = index.Search(*queries_, 10, filter);
    EXPECT_TRUE(res.ok()) << res.status();
    double sum = 0;
    *short_results = 0;
    for (int q = 0; q < kQueries; ++q) {
      auto want = BruteForce(*base_, *ids_, kDim, &(*queries_)[q * kDim], 10, metric, allowed);
      sum += Recall((*res)[q], want);
      if ((*res)[q].size() < want.size()) ++*short_results;
      for (const auto& h : (*res)[q]) {
        if (allowed) {
          EXPECT_TRUE(allowed(h.id)) << h.id;
        }
      }
    }
    return sum / kQueries;
  }
  static std::vector<float>* base_;
  static std::vector<int64_t>* ids_;
  static std::vector<float>* queries_;
  static HnswIndex* cosine_;
  static HnswIndex* l2_;
};
HnswIndex* HnswTest::cosine_;
HnswIndex* HnswTest::l2_;
std::vector<float>* HnswTest::base_;
std::vector<int64_t>* HnswTest::ids_;
std::vector<float>* HnswTest::queries_;

TEST_F(HnswTest, RecallAtLeast95WithAndWithoutFilters) {
  for (Metric metric : {Metric::kCosine, Metric::kL2}) {
    const HnswIndex* index = metric == Metric::kCosine ? cosine_ : l2_;
    size_t short_results;
    double r = MeanRecall(*index, metric, nullptr, {}, &short_results);
    EXPECT_GE(r, 0.95) << MetricName(metric);
    EXPECT_EQ(short_results, 0u);

    // Half the ids allowed: goes through the graph with the IDSelector.
    auto half = [](int64_t id) { return id % 2 == 0; };
    FnFilter half_filter(half);
    r = MeanRecall(*index, metric, &half_filter, half, &short_results);
    EXPECT_GE(r, 0.95) << "half filter " << MetricName(metric);
    EXPECT_EQ(short_results, 0u);

    // 1% allowed: exact scan of the allowed ids.
    auto rare = [](int64_t id) { return id % 100 == 7; };
    FnFilter rare_filter(rare);
    r = MeanRecall(*index, metric, &rare_filter, rare, &short_results);
    EXPECT_DOUBLE_EQ(r, 1.0) << "rare filter " << MetricName(metric);
    EXPECT_EQ(short_results, 0u);
  }
}

TEST_F(HnswTest, SelectiveFilterReturnsKWheneverKMatch) {
  const HnswIndex* index = cosine_;
  FnFilter twelve([](int64_t id) { return id % 800 == 3; });  // 12 or 13 ids allowed
  auto res = index->Search(*queries_, 10, &twelve);
  ASSERT_TRUE(res.ok());
  for (const auto& hits : *res) EXPECT_EQ(hits.size(), 10u);
  FnFilter three([](int64_t id) { return id == 5 || id == 500 || id == 5000; });
  res = index->Search(*queries_, 10, &three);
  for (const auto& hits : *res) EXPECT_EQ(hits.size(), 3u);
}

TEST_F(HnswTest, RemovedAndOverwrittenIdsAreNeverReturned) {
  auto index = Copy(*l2_);
  // Remove 30% of ids, including each query's true nearest neighbours.
  std::vector<int64_t> removed;
  for (int64_t id = 1; id <= static_cast<int64_t>(kN); ++id) {
    if (id % 10 < 3) removed.push_back(id);
  }
  for (int q = 0; q < kQueries; ++q) {
    for (const auto& h : BruteForce(*base_, *ids_, kDim, &(*queries_)[q * kDim], 3, Metric::kL2)) {
      removed.push_back(h.id);
    }
  }
  std::sort(removed.begin(), removed.end());
  removed.erase(std::unique(removed.begin(), removed.end()), removed.end());
  ASSERT_EQ(*index->Remove(removed), removed.size());
  EXPECT_TRUE(index->NeedsRebuild());
  EXPECT_EQ(index->size(), kN - removed.size());
  // Overwrite: id 4 re-added under a new id 100004 with the same vector.
  std::vector<float> v4(base_->begin() + 3 * kDim, base_->begin() + 4 * kDim);
  ASSERT_TRUE(index->Remove(std::vector<int64_t>{4}).ok());
  ASSERT_TRUE(index->Add(std::vector<int64_t>{100004}, v4).ok());
  auto res = index->Search(*queries_, 10);
  ASSERT_TRUE(res.ok());
  std::unordered_set<int64_t> gone(removed.begin(), removed.end());
  gone.insert(4);
  for (const auto& hits : *res) {
    EXPECT_EQ(hits.size(), 10u);
    for (const auto& h : hits) EXPECT_FALSE(gone.count(h.id)) << h.id;
  }
  auto self = index->Search(v4, 1);
  EXPECT_EQ((*self)[0][0].id, 100004);
  EXPECT_FALSE(index->Contains(4));
}

// A filter's bitmap (IdFilter::Dense) is a faster way to ask the same
// question: the search must not change. Random filters of several densities,
// the exact-scan, graph-walk and fallback paths, with tombstones.
TEST_F(HnswTest, BitmapFilterGivesTheSameHitsAsPerIdFilter) {
  auto index = Copy(*l2_);
  std::mt19937_64 rng(7);
  std::vector<int64_t> removed;
  for (int64_t id = 1; id <= static_cast<int64_t>(kN); ++id) {
    if (rng() % 100 < 15) removed.push_back(id);
  }
  ASSERT_EQ(*index->Remove(removed), removed.size());
  for (double density : {0.002, 0.01, 0.04, 0.1, 0.3, 0.5, 0.9, 1.0}) {
    for (int round = 0; round < 2; ++round) {
      const uint64_t salt = rng();
      auto allowed = [&](int64_t id) {
        return static_cast<double>(std::hash<uint64_t>{}(id ^ salt) % 10000) < density * 10000;
      };
      // Ids outside the index too (0, beyond the last): the bitmap spans more.
      IdBitmap bitmap(0, kN + 100);
      for (int64_t id = 0; id <= static_cast<int64_t>(kN) + 100; ++id) {
        if (allowed(id)) bitmap.Set(id);
      }
      IdBitmapFilter dense(std::move(bitmap));
      FnFilter per_id(allowed);
      ASSERT_EQ(per_id.Dense(), nullptr);
      for (int k : {1, 10, 100}) {
        auto a = index->Search(*queries_, k, &per_id);
        auto b = index->Search(*queries_, k, &dense);
        ASSERT_TRUE(a.ok() && b.ok());
        for (int q = 0; q < kQueries; ++q) {
          ASSERT_EQ((*a)[q].size(), (*b)[q].size()) << density << " k " << k << " q " << q;
          for (size_t i = 0; i < (*a)[q].size(); ++i) {
            EXPECT_EQ((*a)[q][i].id, (*b)[q][i].id);
            EXPECT_EQ((*a)[q][i].score, (*b)[q][i].score);
          }
        }
      }
    }
  }
}

TEST_F(HnswTest, SmallIndexAnswersExactly) {
  HnswIndex index(kDim, 16, Metric::kInnerProduct);  // default exact_below
  std::vector<float> base(base_->begin(), base_->begin() + 2000 * kDim);
  std::vector<int64_t> ids(ids_->begin(), ids_->begin() + 2000);
  ASSERT_TRUE(index.Add(ids, base).ok());
  auto res = index.Search(*queries_, 10);
  for (int q = 0; q < kQueries; ++q) {
    const float* query = &(*queries_)[q * kDim];
    auto want = BruteForce(base, ids, kDim, query, 10, Metric::kInnerProduct);
    auto all = BruteForce(base, ids, kDim, query, ids.size(), Metric::kInnerProduct);
    std::unordered_map<int64_t, double> exact;
    for (const auto& h : all) exact[h.id] = h.score;
    ExpectExactTopK((*res)[q], want, [&](int64_t id) { return exact.at(id); },
                    [](double s) { return 1e-3 * (1 + std::abs(s)); },
                    "query " + std::to_string(q));
  }
}

TEST_F(HnswTest, SerializeRoundTripKeepsGraphAndTombstones) {
  auto index = Copy(*cosine_);
  ASSERT_TRUE(index->Remove(std::vector<int64_t>{1, 2, 3}).ok());
  auto bytes = index->Serialize();
  ASSERT_TRUE(bytes.ok());
  auto back = DeserializeIndex(*bytes);
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ((*back)->spec(), "HNSW32");
  EXPECT_EQ((*back)->size(), index->size());
  EXPECT_FALSE((*back)->Contains(2));
  auto* hnsw = dynamic_cast<HnswIndex*>(back->get());
  ASSERT_NE(hnsw, nullptr);
  hnsw->set_exact_below(0);
  auto a = index->Search(*queries_, 10);
  auto b = (*back)->Search(*queries_, 10);
  for (int q = 0; q < kQueries; ++q) {
    ASSERT_EQ((*a)[q].size(), (*b)[q].size());
    for (size_t i = 0; i < (*a)[q].size(); ++i) EXPECT_EQ((*a)[q][i].id, (*b)[q][i].id);
  }
}

TEST_F(HnswTest, ConcurrentSearchesDuringAddsAndRemoves) {
  HnswIndex index(kDim, 16, Metric::kCosine);
  index.set_exact_below(0);
  ASSERT_TRUE(
      index.Add(Iota(1000, 1), std::span<const float>(*base_).subspan(0, 1000 * kDim)).ok());
  std::atomic<bool> stop{false};
  std::atomic<int> failures{0};
  std::vector<std::thread> readers;
  for (int t = 0; t < 3; ++t) {
    readers.emplace_back([&, t] {
      FnFilter even([](int64_t id) { return id % 2 == 0; });
      while (!stop) {
        auto r = index.Search(std::span<const float>(&(*queries_)[t * kDim], kDim), 10,
                              t == 0 ? &even : nullptr);
        if (!r.ok() || (*r)[0].size() != 10) ++failures;
        for (const auto& h : r.ok() ? (*r)[0] : std::vector<SearchHit>{}) {
          if (t == 0 && h.id % 2 != 0) ++failures;
        }
      }
    });
  }
  for (size_t start = 1000; start < 3000; start += 100) {
    ASSERT_TRUE(index
                    .Add(std::span<const int64_t>(*ids_).subspan(start, 100),
                         std::span<const float>(*base_).subspan(start * kDim, 100 * kDim))
                    .ok());
    ASSERT_TRUE(index.Remove(std::vector<int64_t>{static_cast<int64_t>(start / 10)}).ok());
  }
  stop = true;
  for (auto& t : readers) t.join();
  EXPECT_EQ(failures, 0);
  EXPECT_EQ(index.size(), 3000u - 20u);
}

}  // namespace
}  // namespace neodb::index
