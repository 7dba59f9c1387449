#pragma once
// Brute-force reference search (double precision) and random data for index tests.

#include <algorithm>
#include <cmath>
#include <functional>
#include <random>
#include <string>
#include <unordered_set>
#include <vector>

#include <gtest/gtest.h>

#include "index/threads.h"
#include "index/vector_index.h"

namespace neodb::index::testing {

// One OpenMP thread for builds: the shared CI/dev host is oversubscribed and
// spinning OpenMP teams make index tests 20x slower (index/threads.h). Call once
// per test binary from a namespace-scope initialiser; returns true.
inline bool UseSingleThreadedBuilds() {
  SetIndexBuildThreads(1);
  return true;
}

inline std::vector<float> RandomVectors(size_t n, int dim, uint32_t seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> dist(0, 1);
  std::vector<float> v(n * dim);
  for (float& x : v) x = dist(rng);
  return v;
}

inline std::vector<int64_t> Iota(size_t n, int64_t first = 0) {
  std::vector<int64_t> ids(n);
  for (size_t i = 0; i < n; ++i) ids[i] = first + static_cast<int64_t>(i);
  return ids;
}

// Exact top-k by the documented score convention (higher is better).
inline std::vector<SearchHit> BruteForce(const std::vector<float>& base,
                                         const std::vector<int64_t>& ids, int dim,
                                         const float* query, int k, Metric metric,
                                         const std::function<bool(int64_t)>& allowed = {}) {
  std::vector<std::pair<double, int64_t>> scored;
  double qn = 0;
  for (int d = 0; d < dim; ++d) qn += double(query[d]) * query[d];
  for (size_t i = 0; i < ids.size(); ++i) {
    if (allowed && !allowed(ids[i])) continue;
    const float* x = &base[i * dim];
    double dot = 0, xn = 0, l2 = 0;
    for (int d = 0; d < dim; ++d) {
      dot += double(x[d]) * query[d];
      xn += double(x[d]) * x[d];
      l2 += (double(x[d]) - query[d]) * (double(x[d]) - query[d]);
    }
    double s = metric == Metric::kL2 ? -l2
               : metric == Metric::kInnerProduct
                   ? dot
                   : (xn > 0 && qn > 0 ? dot / std::sqrt(xn * qn) : 0);
    scored.push_back({s, ids[i]});
  }
  std::sort(scored.begin(), scored.end(), [](auto& a, auto& b) {
    return a.first > b.first || (a.first == b.first && a.second < b.second);
  });
  std::vector<SearchHit> out;
  for (size_t i = 0; i < scored.size() && i < static_cast<size_t>(k); ++i) {
    out.push_back({scored[i].second, static_cast<float>(scored[i].first)});
  }
  return out;
}

// Checks that `got` is an exact top-k of the brute-force ranking `want`,
// allowing for float rounding: two candidates whose exact scores differ by
// less than the rounding error may come back in either order (which one wins
// depends on the BLAS kernel's summation order, i.e. on the CPU), so ranks are
// compared by exact score, not by id. `score_of` gives a hit's exact score;
// `tol(s)` bounds the float error of a score near s.
inline void ExpectExactTopK(const std::vector<SearchHit>& got, const std::vector<SearchHit>& want,
                            const std::function<double(int64_t)>& score_of,
                            const std::function<double(double)>& tol, const std::string& what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  std::unordered_set<int64_t> seen;
  for (size_t i = 0; i < want.size(); ++i) {
    EXPECT_TRUE(seen.insert(got[i].id).second) << what << ": id " << got[i].id << " twice";
    const double exact = score_of(got[i].id);
    // The reported score is this hit's own score ...
    EXPECT_NEAR(got[i].score, exact, tol(exact)) << what << " rank " << i;
    // ... and the hit is as good as the exact i-th best, up to rounding.
    EXPECT_GE(exact, want[i].score - tol(want[i].score))
        << what << " rank " << i << ": id " << got[i].id << " where the exact ranking has "
        << want[i].id;
  }
}

inline double Recall(const std::vector<SearchHit>& got, const std::vector<SearchHit>& want) {
  if (want.empty()) return 1.0;
  std::unordered_set<int64_t> w;
  for (const auto& h : want) w.insert(h.id);
  size_t hit = 0;
  for (const auto& h : got) hit += w.count(h.id);
  return double(hit) / want.size();
}

class FnFilter : public IdFilter {
 public:
  explicit FnFilter(std::function<bool(int64_t)> fn) : fn_(std::move(fn)) {}
  bool Allowed(int64_t id) const override { return fn_(id); }

 private:
  std::function<bool(int64_t)> fn_;
};

}  // namespace neodb::index::testing
