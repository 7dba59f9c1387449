#pragma once
// How sure a before/after figure is. adapt's table shows two means over the
// same held-out queries; whether their difference is more than which queries
// happened to be held out is what a user deciding on --apply needs, and what
// a comparison of two adapt runs (mined against in-batch negatives) needs.
// Both are paired: the same queries, scored twice.

#include <cstdint>
#include <vector>

namespace neodb::adapt {

struct PairedDifference {
  int64_t queries = 0;
  double mean = 0;  // mean of after - before
  // The 95% percentile interval of that mean over `resamples` bootstrap
  // resamples of the queries (with replacement, the pairs kept together).
  double low = 0;
  double high = 0;
  int64_t better = 0;  // queries where after > before
  int64_t worse = 0;   // after < before
};

// REQUIRES: before.size() == after.size(), resamples >= 1. Deterministic for
// a seed on every machine (splitmix64, no std:: distribution). No queries:
// all zero.
PairedDifference PairedBootstrap(const std::vector<double>& before,
                                 const std::vector<double>& after, int resamples = 10000,
                                 uint64_t seed = 1);

}  // namespace neodb::adapt
