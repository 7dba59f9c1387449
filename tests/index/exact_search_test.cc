// ExactTopKRows (the exact path for small allowed sets, scored a chunk of rows
// at a time by DotRowsAt) against ExactTopK over the whole matrix with the
// same rows allowed (scored by DotRows): same rows, bit-identical scores.
#include "index/exact_search.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <random>
#include <unordered_set>
#include <vector>

namespace neodb::index {
namespace {

TEST(ExactTopKRowsTest, SameHitsAndBitIdenticalScoresAsExactTopK) {
  constexpr size_t kN = 3000;
  std::mt19937 rng(51);
  std::normal_distribution<float> nd;
  for (int dim : {7, 64, 384}) {
    std::vector<float> base(kN * dim), query(dim);
    for (float& v : base) v = nd(rng);
    for (float& v : query) v = nd(rng);
    std::vector<float> norms(kN);
    for (size_t r = 0; r < kN; ++r) norms[r] = SquaredNorm(base.data() + r * dim, dim);
    // 0, 1, a partial chunk, several chunks plus a tail; unsorted.
    for (size_t count : {size_t{0}, size_t{1}, size_t{100}, size_t{1000}}) {
      std::vector<size_t> rows(kN);
      for (size_t r = 0; r < kN; ++r) rows[r] = r;
      std::shuffle(rows.begin(), rows.end(), rng);
      rows.resize(count);
      std::unordered_set<size_t> in(rows.begin(), rows.end());
      auto allowed = [&](size_t r) { return in.count(r) > 0; };
      for (Metric metric : {Metric::kInnerProduct, Metric::kL2}) {
        for (bool given : {true, false}) {
          std::span<const float> sq = given ? std::span<const float>(norms)
                                            : std::span<const float>();
          for (int k : {1, 10, 2000}) {
            auto want =
                ExactTopK(base.data(), kN, dim, sq, metric, query.data(), 1, k, allowed)[0];
            auto got = ExactTopKRows(base.data(), dim, rows, sq, metric, query.data(), k);
            ASSERT_EQ(got.size(), want.size()) << dim << " " << count << " " << k;
            for (size_t i = 0; i < got.size(); ++i) {
              EXPECT_EQ(got[i].row, want[i].row) << dim << " " << count << " " << k << " " << i;
              EXPECT_EQ(0, std::memcmp(&got[i].score, &want[i].score, sizeof(float)))
                  << got[i].score << " vs " << want[i].score;
            }
          }
        }
      }
    }
  }
}

}  // namespace
}  // namespace neodb::index
