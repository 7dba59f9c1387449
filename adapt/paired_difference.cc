#include "adapt/paired_difference.h"

#include <algorithm>
#include <cmath>

#include "encoder/train/train_params.h"

namespace neodb::adapt {

PairedDifference PairedBootstrap(const std::vector<double>& before,
                                 const std::vector<double>& after, int resamples, uint64_t seed) {
  PairedDifference d;
  const size_t n = std::min(before.size(), after.size());
  d.queries = static_cast<int64_t>(n);
  if (n == 0) return d;
  std::vector<double> diff(n);
  for (size_t i = 0; i < n; ++i) {
    diff[i] = after[i] - before[i];
    d.mean += diff[i];
    d.better += diff[i] > 0;
    d.worse += diff[i] < 0;
  }
  d.mean /= static_cast<double>(n);
  encoder::train::SplitMix64 rng(seed);
  std::vector<double> means(static_cast<size_t>(std::max(resamples, 1)));
  for (double& m : means) {
    double sum = 0;
    // Next() % n: the bias is below n / 2^64, far under what 10,000 resamples resolve.
    for (size_t i = 0; i < n; ++i) sum += diff[rng.Next() % n];
    m = sum / static_cast<double>(n);
  }
  std::sort(means.begin(), means.end());
  // Percentiles 2.5 and 97.5 by the nearest rank.
  const auto at = [&](double p) {
    const double rank = std::ceil(p * static_cast<double>(means.size()));
    const size_t i = static_cast<size_t>(std::clamp(rank, 1.0, double(means.size()))) - 1;
    return means[i];
  };
  d.low = at(0.025);
  d.high = at(0.975);
  return d;
}

}  // namespace neodb::adapt
