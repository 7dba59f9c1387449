#pragma once
// Helpers for the precision tests: pooled vectors of one forward pass, their
// cosines against a reference, and a printed distribution (min, median).
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "encoder/backend.h"
#include "encoder/ops/pooling.h"
#include "gtest/gtest.h"
#include "tests/encoder/test_weights.h"

namespace neodb::encoder::testing {

inline double Cosine(const float* a, const float* b, int64_t d) {
  double ab = 0, aa = 0, bb = 0;
  for (int64_t i = 0; i < d; ++i) ab += double{a[i]} * b[i], aa += double{a[i]} * a[i], bb += double{b[i]} * b[i];
  return ab / std::sqrt(aa * bb);
}

// Mean- and CLS-pooled vectors from one forward pass.
inline std::vector<Tensor> PoolBoth(Backend& backend, const PackedBatch& batch, int64_t dim) {
  auto hidden = backend.HiddenStates(batch);
  EXPECT_TRUE(hidden.ok()) << hidden.status();
  std::vector<Tensor> out;
  if (!hidden.ok()) return out;
  for (Pooling pooling : {Pooling::kMean, Pooling::kCls}) {
    out.push_back(Tensor::Empty({batch.batch_size(), dim}, DType::kF32));
    ops::Pool(*hidden, batch.offsets, pooling, &out.back());
  }
  return out;
}

// Cosines of `got` against `want` (PoolBoth results), each checked against
// `threshold`.
inline std::vector<double> Compare(const std::vector<Tensor>& want, const std::vector<Tensor>& got,
                            const PackedBatch& batch, int64_t dim, double threshold,
                            const std::string& what) {
  std::vector<double> cosines;
  if (want.size() != 2 || got.size() != 2) return cosines;
  for (int pool = 0; pool < 2; ++pool) {
    for (int64_t b = 0; b < batch.batch_size(); ++b) {
      const double c =
          Cosine(got[pool].data<float>() + b * dim, want[pool].data<float>() + b * dim, dim);
      cosines.push_back(c);
      EXPECT_GE(c, threshold) << what << " sequence " << b << " (length " << batch.length(b)
                              << ", " << (pool == 0 ? "mean" : "cls") << ")";
    }
  }
  return cosines;
}

inline void Report(const char* what, std::vector<double> c) {
  if (c.empty()) return;
  std::sort(c.begin(), c.end());
  std::printf("%s: %zu vectors, cosine min %.6f median %.6f\n", what, c.size(), c.front(), c[c.size() / 2]);
}

inline PackedBatch MixedBatch(int64_t vocab, const std::vector<int64_t>& lengths, uint64_t seed) {
  testing::Prng prng(seed);
  PackedBatch batch;
  for (int64_t len : lengths) {
    std::vector<int32_t> ids(len);
    for (auto& id : ids) id = static_cast<int32_t>(prng.Next() % vocab);
    batch.Add(ids);
  }
  return batch;
}

}  // namespace neodb::encoder::testing
