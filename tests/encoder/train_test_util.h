#pragma once
// Helpers shared by the training tests: a tiny NeoBERT config, random
// vectors, central finite differences and a gradient comparison.

#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <string>
#include <vector>

#include "encoder/checkpoint/config.h"
#include "encoder/train/pairs.h"
#include "encoder/train/train_params.h"
#include "encoder/train/trainer.h"

namespace neodb::encoder::train::testing {

// 2 layers, hidden 16, 2 heads of 8, FFN width 16, vocabulary 40.
inline NeoBertConfig TinyConfig() {
  NeoBertConfig c;
  c.hidden_size = 16;
  c.num_hidden_layers = 2;
  c.num_attention_heads = 2;
  c.intermediate_size = 24;  // FFN width round8(int(2·24/3)) = 16
  c.vocab_size = 40;
  c.max_length = 16;
  c.norm_eps = 1e-5;
  return c;
}

inline std::vector<double> RandomVector(int64_t n, uint64_t seed, double scale = 1.0) {
  SplitMix64 rng(seed);
  std::vector<double> v(static_cast<size_t>(n));
  for (double& x : v) x = scale * (2 * rng.Uniform() - 1);
  return v;
}

// Central differences of f w.r.t. x[0..n), step h (x is restored).
inline std::vector<double> NumericGradient(const std::function<double()>& f, double* x, int64_t n,
                                           double h = 1e-5) {
  std::vector<double> g(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) {
    const double saved = x[i];
    x[i] = saved + h;
    const double up = f();
    x[i] = saved - h;
    const double down = f();
    x[i] = saved;
    g[i] = (up - down) / (2 * h);
  }
  return g;
}

// ‖a − n‖ / max(‖a‖, ‖n‖), the relative error of a whole gradient.
inline double RelativeError(const double* a, const double* n, int64_t size) {
  double diff = 0, na = 0, nn = 0;
  for (int64_t i = 0; i < size; ++i) {
    diff += (a[i] - n[i]) * (a[i] - n[i]);
    na += a[i] * a[i];
    nn += n[i] * n[i];
  }
  const double denom = std::max(std::sqrt(std::max(na, nn)), 1e-300);
  return std::sqrt(diff) / denom;
}

// Norm-wise relative error ≤ tol, and every element within tol relative (with
// a small absolute floor for entries that are zero up to rounding). Also
// requires a non-trivial gradient so that the check cannot pass vacuously.
inline void ExpectGradientsClose(const std::string& what, const double* analytic,
                                 const double* numeric, int64_t size, double tol = 1e-3,
                                 double abs_floor = 1e-8) {
  double max_abs = 0;
  for (int64_t i = 0; i < size; ++i) max_abs = std::max(max_abs, std::fabs(numeric[i]));
  EXPECT_GT(max_abs, 1e-6) << what << ": gradient is zero, the check would be vacuous";
  EXPECT_LE(RelativeError(analytic, numeric, size), tol) << what;
  int reported = 0;
  for (int64_t i = 0; i < size; ++i) {
    const double bound = tol * std::max(std::fabs(analytic[i]), std::fabs(numeric[i])) + abs_floor;
    if (std::fabs(analytic[i] - numeric[i]) > bound && reported++ < 5) {
      ADD_FAILURE() << what << "[" << i << "]: analytic " << analytic[i] << " numeric "
                    << numeric[i];
    }
  }
}

// Concept k: the query carries token 10+k, its positive token 40+k — tokens
// a random model cannot relate, so retrieval starts near chance. Filler
// tokens (80..83) differ per seed, so eval pairs are not training pairs.
// Framed by 101/102 ([CLS]/[SEP]); needs a vocabulary of at least 103.
inline std::vector<TokenizedPair> ConceptPairs(int concepts, uint64_t seed, bool with_negatives) {
  SplitMix64 rng(seed);
  auto filler = [&] { return static_cast<int32_t>(80 + rng.Next() % 4); };
  std::vector<TokenizedPair> pairs;
  for (int k = 0; k < concepts; ++k) {
    TokenizedPair p;
    p.line = k + 1;
    p.query = {101, 10 + k, filler(), filler(), 102};
    p.positive = {101, filler(), 40 + k, filler(), 102};
    if (with_negatives) p.negatives.push_back({101, 40 + (k + 1) % concepts, filler(), 102});
    pairs.push_back(std::move(p));
  }
  return pairs;
}

// Contrastive settings that learn ConceptPairs on a 2-layer, 32-wide model.
inline TrainerOptions ConceptTrainerOptions() {
  TrainerOptions o;
  o.steps = 120;
  o.batch_size = 8;
  o.lr = 3e-3;
  o.warmup = 10;
  o.chunk_size = 5;
  o.seed = 7;
  return o;
}

}  // namespace neodb::encoder::train::testing
