// Fusion: reciprocal rank, weighted (min-max), adaptive; hand-computed values.
#include <gtest/gtest.h>

#include <algorithm>
#include <functional>
#include <map>

#include "index/keyword/fusion.h"

namespace neodb::keyword {
namespace {

const std::vector<RankedId> kKeyword = {{1, 10.0f}, {2, 8.0f}, {3, 6.0f}, {4, 2.0f}};
const std::vector<RankedId> kVector = {{3, 0.9f}, {5, 0.8f}, {1, 0.5f}};

TEST(FusionTest, ReciprocalRank) {
  std::vector<FusedHit> hits = FuseReciprocalRank(kKeyword, kVector, 10, 60);
  ASSERT_EQ(hits.size(), 5u);
  // id 1: 1/61 + 1/63; id 3: 1/63 + 1/61 -> tie, lower id first.
  EXPECT_EQ(hits[0].id, 1u);
  EXPECT_EQ(hits[1].id, 3u);
  EXPECT_DOUBLE_EQ(hits[0].score, 1.0 / 61 + 1.0 / 63);
  EXPECT_DOUBLE_EQ(hits[1].score, hits[0].score);
  // id 2: 1/62; id 5: 1/62 -> tie, 2 first; then id 4: 1/64.
  EXPECT_EQ(hits[2].id, 2u);
  EXPECT_EQ(hits[3].id, 5u);
  EXPECT_EQ(hits[4].id, 4u);
  EXPECT_DOUBLE_EQ(hits[4].score, 1.0 / 64);
  // Explain: per-leg ranks and scores.
  EXPECT_EQ(hits[1].keyword.rank, 3);
  EXPECT_FLOAT_EQ(hits[1].keyword.score, 6.0f);
  EXPECT_EQ(hits[1].vector.rank, 1);
  EXPECT_FLOAT_EQ(hits[1].vector.score, 0.9f);
  EXPECT_EQ(hits[3].keyword.rank, 0);
  EXPECT_EQ(FuseReciprocalRank(kKeyword, kVector, 2, 60).size(), 2u);
}

TEST(FusionTest, WeightedMinMax) {
  // Keyword norm: 1 -> 1, 2 -> 0.75, 3 -> 0.5, 4 -> 0. Vector norm: 3 -> 1, 5 -> 0.75, 1 -> 0.
  std::vector<FusedHit> hits = FuseWeighted(kKeyword, kVector, 0.25, 10);
  ASSERT_EQ(hits.size(), 5u);
  std::map<uint64_t, double> score;
  for (const FusedHit& h : hits) score[h.id] = h.score;
  EXPECT_DOUBLE_EQ(score[1], 0.75 * 1.0 + 0.25 * 0.0);
  EXPECT_DOUBLE_EQ(score[2], 0.75 * 0.75);
  EXPECT_DOUBLE_EQ(score[3], 0.75 * 0.5 + 0.25 * 1.0);
  EXPECT_DOUBLE_EQ(score[4], 0.0);
  EXPECT_NEAR(score[5], 0.25 * 0.75, 1e-7);
  EXPECT_EQ(hits[0].id, 1u);
  EXPECT_EQ(hits[1].id, 3u);
  // alpha 0 keeps the keyword order; alpha 1 the vector order.
  std::vector<FusedHit> kw = FuseWeighted(kKeyword, kVector, 0.0, 3);
  EXPECT_EQ(kw[0].id, 1u);
  EXPECT_EQ(kw[1].id, 2u);
  EXPECT_EQ(kw[2].id, 3u);
  std::vector<FusedHit> vec = FuseWeighted(kKeyword, kVector, 1.0, 2);
  EXPECT_EQ(vec[0].id, 3u);
  EXPECT_EQ(vec[1].id, 5u);
  // Equal scores in a leg normalise to 1, not NaN.
  std::vector<RankedId> flat = {{7, 3.0f}, {8, 3.0f}};
  std::vector<FusedHit> f = FuseWeighted(flat, {}, 0.5, 5);
  ASSERT_EQ(f.size(), 2u);
  EXPECT_DOUBLE_EQ(f[0].score, 0.5);
}

TEST(FusionTest, RepeatedIdKeepsItsFirstPlace) {
  std::vector<RankedId> repeated = {{1, 5.0f}, {2, 4.0f}, {1, 1.0f}};
  std::vector<FusedHit> hits = FuseReciprocalRank(repeated, {}, 10, 60);
  ASSERT_EQ(hits.size(), 2u);
  EXPECT_EQ(hits[0].id, 1u);
  EXPECT_EQ(hits[0].keyword.rank, 1);
  EXPECT_DOUBLE_EQ(hits[0].score, 1.0 / 61);
}

TEST(FusionTest, Agreement) {
  EXPECT_DOUBLE_EQ(LegAgreement(kKeyword, kVector, 3), 2.0 / 3);  // {1,2,3} vs {3,5,1}
  EXPECT_DOUBLE_EQ(LegAgreement(kKeyword, kVector, 1), 0.0);
  EXPECT_DOUBLE_EQ(LegAgreement(kKeyword, {}, 10), 0.0);
  EXPECT_DOUBLE_EQ(LegAgreement(kKeyword, kKeyword, 10), 1.0);
}

TEST(FusionTest, AdaptiveWeightsTheVectorLegByAgreement) {
  FusionOptions options;  // adaptive, depth 10, max_alpha 0.5
  // Disjoint legs: alpha 0, the keyword ranking unchanged.
  std::vector<RankedId> unrelated = {{100, 0.9f}, {101, 0.8f}, {102, 0.7f}};
  auto r = Fuse(kKeyword, unrelated, 4, options);
  ASSERT_TRUE(r.ok());
  EXPECT_DOUBLE_EQ(r->alpha, 0.0);
  ASSERT_EQ(r->hits.size(), 4u);
  for (int i = 0; i < 4; ++i) EXPECT_EQ(r->hits[i].id, kKeyword[i].id);
  // Agreement 2/3 over depth min(10, 4, 3) = 3.
  r = Fuse(kKeyword, kVector, 4, options);
  ASSERT_TRUE(r.ok());
  EXPECT_DOUBLE_EQ(r->alpha, 0.5 * 2.0 / 3);
  // One empty leg: the other alone.
  r = Fuse({}, kVector, 4, options);
  ASSERT_TRUE(r.ok());
  EXPECT_DOUBLE_EQ(r->alpha, 1.0);
  ASSERT_EQ(r->hits.size(), 3u);
  EXPECT_EQ(r->hits[0].id, 3u);
  r = Fuse(kKeyword, {}, 4, options);
  ASSERT_TRUE(r.ok());
  EXPECT_DOUBLE_EQ(r->alpha, 0.0);
  EXPECT_EQ(r->hits[0].id, 1u);
  EXPECT_TRUE(Fuse({}, {}, 4, options)->hits.empty());
}

// An index over `hits` (best first by score, ties in the order given: an
// index's own, by insertion) that returns its first n and counts its calls.
struct FakeLegIndex {
  std::vector<RankedId> hits;
  std::vector<int> asked;
  absl::StatusOr<std::vector<RankedId>> operator()(int n) {
    asked.push_back(n);
    return std::vector<RankedId>(hits.begin(), hits.begin() + std::min<size_t>(n, hits.size()));
  }
};

// The true cut: every hit ordered by score, then id; the first `depth`.
std::vector<uint64_t> TrueCut(std::vector<RankedId> hits, int depth) {
  std::sort(hits.begin(), hits.end(), LegOrder);
  std::vector<uint64_t> ids;
  for (int i = 0; i < depth && i < static_cast<int>(hits.size()); ++i) ids.push_back(hits[i].id);
  return ids;
}

std::vector<uint64_t> Ids(const std::vector<RankedId>& hits) {
  std::vector<uint64_t> ids;
  for (const RankedId& h : hits) ids.push_back(h.id);
  return ids;
}

TEST(FusionTest, ALegIsCutAfterItsTiesAreOrderedById) {
  // 5 above, then 300 tied (in descending id order, as an index that
  // numbered them the other way would return them), then 200 below.
  FakeLegIndex index;
  for (int i = 0; i < 5; ++i) index.hits.push_back({static_cast<uint64_t>(1000 + i), 9.0f - i});
  for (int i = 0; i < 300; ++i) index.hits.push_back({static_cast<uint64_t>(600 - i), 2.0f});
  for (int i = 0; i < 200; ++i) {
    index.hits.push_back({static_cast<uint64_t>(2000 + i), 1.0f - static_cast<float>(i) * 0.001f});
  }
  auto leg = FetchLeg(std::ref(index), 100);
  ASSERT_TRUE(leg.ok()) << leg.status();
  // 101 ends inside the tie, 404 past it.
  EXPECT_EQ(index.asked, (std::vector<int>{101, 404}));
  EXPECT_FALSE(leg->complete);
  EXPECT_EQ(Ids(CutLeg(leg->hits, 100)), TrueCut(index.hits, 100));
  EXPECT_EQ(CutLeg(leg->hits, 100).back().id, 301u + 94u);  // ids 301.. ascending

  // No tie at the cut: one fetch of one more.
  index.asked.clear();
  leg = FetchLeg(std::ref(index), 3);
  EXPECT_EQ(index.asked, (std::vector<int>{4}));
  EXPECT_EQ(Ids(CutLeg(leg->hits, 3)), (std::vector<uint64_t>{1000, 1001, 1002}));
  // An index that runs out: complete, one fetch.
  index.asked.clear();
  leg = FetchLeg(std::ref(index), 1000);
  EXPECT_EQ(index.asked, (std::vector<int>{1001}));
  EXPECT_TRUE(leg->complete);
  EXPECT_EQ(Ids(CutLeg(leg->hits, 1000)), TrueCut(index.hits, 1000));
  // The bound: a tie running past kMaxLegFetch is cut in the index's order.
  FakeLegIndex wide;
  for (int i = 0; i < kMaxLegFetch + 10; ++i) {
    wide.hits.push_back({static_cast<uint64_t>((1 << 20) - i), 1.0f});
  }
  leg = FetchLeg(std::ref(wide), 100);
  EXPECT_EQ(wide.asked, (std::vector<int>{101, 404, 1616, 6464, kMaxLegFetch}));
  EXPECT_EQ(leg->hits.size(), static_cast<size_t>(kMaxLegFetch));
  // An error is returned as it is.
  auto failing = [](int) -> absl::StatusOr<std::vector<RankedId>> {
    return absl::UnavailableError("down");
  };
  EXPECT_EQ(FetchLeg(failing, 10).status().code(), absl::StatusCode::kUnavailable);
}

TEST(FusionTest, OptionsAreValidated) {
  FusionOptions bad;
  bad.method = FusionMethod::kWeighted;
  bad.alpha = 1.5;
  EXPECT_EQ(Fuse(kKeyword, kVector, 5, bad).status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(Fuse(kKeyword, kVector, 0, {}).status().code(), absl::StatusCode::kInvalidArgument);
  FusionOptions depth;
  depth.agreement_depth = 0;
  EXPECT_EQ(Fuse(kKeyword, kVector, 5, depth).status().code(), absl::StatusCode::kInvalidArgument);
  for (FusionMethod m :
       {FusionMethod::kAdaptive, FusionMethod::kWeighted, FusionMethod::kReciprocalRank}) {
    EXPECT_EQ(*ParseFusionMethod(FusionMethodName(m)), m);
  }
  EXPECT_FALSE(ParseFusionMethod("sum").ok());
}

}  // namespace
}  // namespace neodb::keyword
