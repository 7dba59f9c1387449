// Fusion: reciprocal rank, weighted (min-max), adaptive; hand-computed values.
#include <gtest/gtest.h>

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
