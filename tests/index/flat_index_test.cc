#include "index/flat_index.h"

#include <gtest/gtest.h>

#include <string>
#include <thread>
#include <unordered_map>

#include "common/atomic_file.h"
#include "common/env_memory.h"
#include "index/index_factory.h"
#include "tests/index/test_util.h"

namespace neodb::index {
namespace {

using testing::BruteForce;
using testing::ExpectExactTopK;
using testing::FnFilter;
using testing::Iota;
using testing::RandomVectors;

class FlatExactTest : public ::testing::TestWithParam<Metric> {};

TEST_P(FlatExactTest, EqualsBruteForceWithAndWithoutFilter) {
  const int dim = 48;
  const size_t n = 3000;
  const Metric metric = GetParam();
  auto index = *MakeIndex("Flat", dim, metric);
  auto base = RandomVectors(n, dim, 1);
  auto ids = Iota(n, 1000);
  ASSERT_TRUE(index->Add(ids, base).ok());
  auto queries = RandomVectors(20, dim, 2);
  FnFilter odd([](int64_t id) { return id % 3 == 1; });
  for (const IdFilter* filter :
       {static_cast<const IdFilter*>(nullptr), static_cast<const IdFilter*>(&odd)}) {
    // Batched (sgemm) and single-query (sgemv) paths.
    auto batched = index->Search(queries, 10, filter);
    ASSERT_TRUE(batched.ok()) << batched.status();
    for (size_t q = 0; q < 20; ++q) {
      auto single = index->Search(std::span<const float>(&queries[q * dim], dim), 10, filter);
      ASSERT_TRUE(single.ok());
      auto want = BruteForce(
          base, ids, dim, &queries[q * dim], 10, metric,
          filter ? std::function<bool(int64_t)>([&](int64_t id) { return odd.Allowed(id); })
                 : std::function<bool(int64_t)>());
      // Exact score of any id (all of them: a full brute-force ranking).
      const auto all = BruteForce(base, ids, dim, &queries[q * dim], n, metric);
      std::unordered_map<int64_t, double> exact;
      for (const auto& h : all) exact[h.id] = h.score;
      const auto score_of = [&](int64_t id) { return exact.at(id); };
      const auto tol = [](double s) { return 1e-3 * (1 + std::abs(s)); };
      for (const auto* got : {&(*batched)[q], &(*single)[0]}) {
        ExpectExactTopK(*got, want, score_of, tol, "query " + std::to_string(q));
        if (filter) {
          for (const auto& h : *got) EXPECT_TRUE(odd.Allowed(h.id));
        }
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Metrics, FlatExactTest,
                         ::testing::Values(Metric::kCosine, Metric::kInnerProduct, Metric::kL2));

TEST(FlatIndexTest, RemoveAndOverwriteNeverReturnStaleIds) {
  const int dim = 8;
  FlatIndex index(dim, Metric::kL2);
  auto base = RandomVectors(100, dim, 3);
  ASSERT_TRUE(index.Add(Iota(100), base).ok());
  std::vector<int64_t> gone = {0, 5, 99, 50, 12345};
  EXPECT_EQ(*index.Remove(gone), 4u);
  EXPECT_EQ(index.size(), 96u);
  // "Overwrite": the new version gets a new id, the old one is removed.
  std::vector<float> v(base.begin() + 7 * dim, base.begin() + 8 * dim);
  ASSERT_TRUE(index.Remove(std::vector<int64_t>{7}).ok());
  ASSERT_TRUE(index.Add(std::vector<int64_t>{1007}, v).ok());
  auto res = index.Search(v, 100);
  ASSERT_TRUE(res.ok());
  EXPECT_EQ((*res)[0].size(), 96u);
  EXPECT_EQ((*res)[0][0].id, 1007);
  // L2 as |x|^2 + |q|^2 - 2 x.q: a vector's distance to itself is zero up to
  // the rounding of those sums (about dim+2 roundings of terms of size |v|^2).
  double norm2 = 0;
  for (float e : v) norm2 += double(e) * e;
  EXPECT_NEAR((*res)[0][0].score, 0.0, 4 * (dim + 2) * 0x1p-24 * norm2);
  for (const auto& h : (*res)[0]) {
    EXPECT_TRUE(h.id != 0 && h.id != 5 && h.id != 99 && h.id != 50 && h.id != 7) << h.id;
  }
  EXPECT_FALSE(index.Contains(7));
  EXPECT_TRUE(index.Contains(1007));
}

TEST(FlatIndexTest, SelectiveFilterReturnsEveryMatchUpToK) {
  const int dim = 16;
  FlatIndex index(dim, Metric::kCosine);
  ASSERT_TRUE(index.Add(Iota(5000), RandomVectors(5000, dim, 4)).ok());
  FnFilter three([](int64_t id) { return id == 10 || id == 2000 || id == 4999; });
  auto res = index.Search(RandomVectors(1, dim, 5), 10, &three);
  ASSERT_TRUE(res.ok());
  EXPECT_EQ((*res)[0].size(), 3u);
  FnFilter many([](int64_t id) { return id % 100 == 0; });
  res = index.Search(RandomVectors(1, dim, 5), 10, &many);
  EXPECT_EQ((*res)[0].size(), 10u);
}

TEST(FlatIndexTest, BadInputIsAStatus) {
  FlatIndex index(4, Metric::kCosine);
  std::vector<float> v = {1, 2, 3, 4};
  EXPECT_EQ(index.Add(std::vector<int64_t>{1, 2}, v).code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(index.Add(std::vector<int64_t>{-1}, v).code(), absl::StatusCode::kInvalidArgument);
  std::vector<float> nan = {1, std::nanf(""), 0, 0};
  EXPECT_EQ(index.Add(std::vector<int64_t>{1}, nan).code(), absl::StatusCode::kInvalidArgument);
  ASSERT_TRUE(index.Add(std::vector<int64_t>{1}, v).ok());
  EXPECT_EQ(index.Add(std::vector<int64_t>{1}, v).code(), absl::StatusCode::kAlreadyExists);
  EXPECT_EQ(index.Search(v, 0).status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(index.Search(std::vector<float>{1, 2, 3}, 1).status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(index.size(), 1u);
}

TEST(FactoryTest, BadSpecsAreInvalidArgument) {
  for (const char* spec : {"", "flat", "HNSW", "HNSW3", "HNSW1000", "HNSW32,PQ8", "IVF", "IVF0,PQ8",
                           "IVF16,PQ7", "IVF16,PQ64", "IVF16,Flat", "Foo", " Flat", "IVF16,PQ8x"}) {
    auto made = MakeIndex(spec, 32, Metric::kCosine);
    ASSERT_FALSE(made.ok()) << spec;
    EXPECT_EQ(made.status().code(), absl::StatusCode::kInvalidArgument) << spec;
  }
  EXPECT_FALSE(MakeIndex("Flat", 0, Metric::kCosine).ok());
  for (const char* spec : {"Flat", "HNSW32", "HNSW16,Flat", "IVF16,PQ8", "IVF1,PQ32"}) {
    auto made = MakeIndex(spec, 32, Metric::kL2);
    ASSERT_TRUE(made.ok()) << spec << ": " << made.status();
  }
  EXPECT_EQ((*MakeIndex("HNSW16,Flat", 32, Metric::kL2))->spec(), "HNSW16");
  EXPECT_EQ(ParseMetric("dot").status().code(), absl::StatusCode::kInvalidArgument);
}

TEST(FlatIndexTest, SerializeRoundTripAndCorruption) {
  const int dim = 8;
  auto index = *MakeIndex("Flat", dim, Metric::kL2);
  auto base = RandomVectors(50, dim, 6);
  ASSERT_TRUE(index->Add(Iota(50), base).ok());
  auto bytes = *index->Serialize();
  auto back = DeserializeIndex(bytes);
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ((*back)->Ids(), index->Ids());
  auto q = RandomVectors(1, dim, 7);
  EXPECT_EQ((*(*back)->Search(q, 5))[0][0].id, (*index->Search(q, 5))[0][0].id);
  for (size_t cut : {size_t{0}, size_t{5}, bytes.size() / 2, bytes.size() - 1}) {
    auto r = DeserializeIndex(std::string_view(bytes).substr(0, cut));
    EXPECT_EQ(r.status().code(), absl::StatusCode::kDataLoss) << cut;
  }
}

TEST(FlatIndexTest, ConcurrentSearchesDuringAdds) {
  const int dim = 16;
  FlatIndex index(dim, Metric::kCosine);
  ASSERT_TRUE(index.Add(Iota(1000), RandomVectors(1000, dim, 8)).ok());
  std::atomic<bool> stop{false};
  std::atomic<int> failures{0};
  std::vector<std::thread> readers;
  for (int t = 0; t < 3; ++t) {
    readers.emplace_back([&, t] {
      auto q = RandomVectors(1, dim, 100 + t);
      while (!stop) {
        auto r = index.Search(q, 10);
        if (!r.ok() || (*r)[0].size() != 10) ++failures;
      }
    });
  }
  for (int i = 0; i < 50; ++i) {
    ASSERT_TRUE(index.Add(Iota(20, 1000 + i * 20), RandomVectors(20, dim, 200 + i)).ok());
  }
  stop = true;
  for (auto& t : readers) t.join();
  EXPECT_EQ(failures, 0);
  EXPECT_EQ(index.size(), 2000u);
}

// LoadIndex reads through the Env it is given: a memory Env serves the file
// with no file on disk.
TEST(FlatIndexTest, LoadIndexReadsThroughTheEnv) {
  auto index = *MakeIndex("Flat", 4, Metric::kL2);
  ASSERT_TRUE(index->Add(Iota(3), RandomVectors(3, 4, 1)).ok());
  const std::string bytes = *index->Serialize();
  std::unique_ptr<Env> env = NewMemEnv();
  ASSERT_TRUE(WriteFileAtomically(env.get(), "/index.bin", {bytes}).ok());
  auto back = LoadIndex("/index.bin", env.get());
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ((*back)->Ids(), index->Ids());
  auto absent = LoadIndex("/none.bin", env.get());
  EXPECT_EQ(absent.status().code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(absent.status().message(), "cannot open index file /none.bin");
  EXPECT_EQ(LoadIndex("/index.bin").status().code(), absl::StatusCode::kNotFound);  // not on disk
}

}  // namespace
}  // namespace neodb::index
