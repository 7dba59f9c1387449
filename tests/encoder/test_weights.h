#pragma once
// Test helpers: NeoBERT weights filled from a tiny deterministic PRNG (so the
// forward-pass tests need neither checkpoint files nor RandomWeights), and a
// straightforward double-precision forward pass written from NEOBERT.md §3 as
// naive loops, to compare the optimised backend against.

#include <cmath>
#include <cstdint>
#include <vector>

#include "encoder/checkpoint/weights.h"

namespace neodb::encoder::testing {

// splitmix64 → uniform in [-scale, scale).
class Prng {
 public:
  explicit Prng(uint64_t seed) : state_(seed) {}
  uint64_t Next() {
    uint64_t z = (state_ += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  }
  float Uniform(float scale) {
    return static_cast<float>((static_cast<double>(Next() >> 11) / 9007199254740992.0 * 2 - 1) *
                              scale);
  }

 private:
  uint64_t state_;
};

inline Tensor RandomTensor(Shape shape, float scale, Prng& prng, float center = 0.0f) {
  Tensor t = Tensor::Empty(std::move(shape), DType::kF32);
  float* p = t.data<float>();
  for (int64_t i = 0; i < t.numel(); ++i) p[i] = center + prng.Uniform(scale);
  return t;
}

// A small config; FFN width given explicitly (tests do not link config.cc).
inline NeoBertConfig SmallConfig(int64_t hidden = 64, int64_t layers = 2, int64_t heads = 4,
                                 int64_t vocab = 211, int64_t max_length = 512) {
  NeoBertConfig c;
  c.hidden_size = hidden;
  c.num_hidden_layers = layers;
  c.num_attention_heads = heads;
  c.intermediate_size = hidden * 3;  // ffn width 2·hidden
  c.vocab_size = vocab;
  c.max_length = max_length;
  return c;
}

// Weights with larger-than-init magnitudes (qkv ±0.25) so attention is far
// from uniform and RoPE/head-split mistakes change the output visibly.
inline NeoBertWeights TestWeights(const NeoBertConfig& c, int64_t ffn, uint64_t seed) {
  Prng prng(seed);
  NeoBertWeights w;
  w.config = c;
  const int64_t h = c.hidden_size;
  w.embeddings = RandomTensor({c.vocab_size, h}, 1.0f, prng);
  for (int64_t i = 0; i < c.num_hidden_layers; ++i) {
    LayerWeights l;
    l.attention_norm = RandomTensor({h}, 0.2f, prng, 1.0f);
    l.qkv = RandomTensor({3 * h, h}, 0.25f, prng);
    l.wo = RandomTensor({h, h}, 0.1f, prng);
    l.ffn_norm = RandomTensor({h}, 0.2f, prng, 1.0f);
    l.w12 = RandomTensor({2 * ffn, h}, 0.15f, prng);
    l.w3 = RandomTensor({h, ffn}, 0.1f, prng);
    w.layers.push_back(std::move(l));
  }
  w.final_norm = RandomTensor({h}, 0.2f, prng, 1.0f);
  w.model_id = "nb-test";
  return w;
}

// Naive double-precision forward of one sequence: last_hidden_state [T][C].
inline std::vector<std::vector<double>> NaiveForward(const NeoBertWeights& w,
                                                     const std::vector<int32_t>& ids) {
  const NeoBertConfig& c = w.config;
  const int64_t C = c.hidden_size, H = c.num_attention_heads, D = C / H;
  const int64_t F = w.layers.empty() ? 0 : w.layers[0].w3.dim(1);
  const int64_t T = static_cast<int64_t>(ids.size());
  const double eps = c.norm_eps;
  using Mat = std::vector<std::vector<double>>;
  auto rms = [&](const Mat& x, const Tensor& wt) {
    Mat y(T, std::vector<double>(C));
    const float* g = wt.data<float>();
    for (int64_t t = 0; t < T; ++t) {
      double ss = 0;
      for (double v : x[t]) ss += v * v;
      const double s = 1.0 / std::sqrt(ss / C + eps);
      for (int64_t i = 0; i < C; ++i) y[t][i] = x[t][i] * s * g[i];
    }
    return y;
  };
  auto linear = [&](const Mat& x, const Tensor& wt) {  // x · wᵀ
    const int64_t out = wt.dim(0), in = wt.dim(1);
    const float* p = wt.data<float>();
    Mat y(T, std::vector<double>(out));
    for (int64_t t = 0; t < T; ++t)
      for (int64_t o = 0; o < out; ++o) {
        double s = 0;
        for (int64_t i = 0; i < in; ++i) s += x[t][i] * p[o * in + i];
        y[t][o] = s;
      }
    return y;
  };
  Mat x(T, std::vector<double>(C));
  for (int64_t t = 0; t < T; ++t)
    for (int64_t i = 0; i < C; ++i) x[t][i] = w.embeddings.data<float>()[ids[t] * C + i];
  for (const LayerWeights& l : w.layers) {
    Mat y = linear(rms(x, l.attention_norm), l.qkv);
    // RoPE angles in F32 as position × inv_freq, the same recipe the spec gives.
    auto rope = [&](std::vector<double>& v, int64_t p) {
      for (int64_t i = 0; i < D / 2; ++i) {
        const float e = static_cast<float>(2 * i) / static_cast<float>(D);
        const float inv = static_cast<float>(1.0 / std::pow(c.rope_theta, double{e}));
        const double a = static_cast<float>(p) * inv;
        const double x0 = v[2 * i], x1 = v[2 * i + 1];
        v[2 * i] = x0 * std::cos(a) - x1 * std::sin(a);
        v[2 * i + 1] = x0 * std::sin(a) + x1 * std::cos(a);
      }
    };
    Mat o(T, std::vector<double>(C));
    for (int64_t h = 0; h < H; ++h) {
      Mat q(T), k(T), v(T);
      for (int64_t t = 0; t < T; ++t) {
        const auto* row = y[t].data() + 3 * D * h;
        q[t].assign(row, row + D);
        k[t].assign(row + D, row + 2 * D);
        v[t].assign(row + 2 * D, row + 3 * D);
        rope(q[t], t);
        rope(k[t], t);
      }
      for (int64_t t = 0; t < T; ++t) {
        std::vector<double> s(T);
        double m = -1e300;
        for (int64_t j = 0; j < T; ++j) {
          double d = 0;
          for (int64_t e = 0; e < D; ++e) d += q[t][e] * k[j][e];
          s[j] = d / std::sqrt(double(D));
          m = std::max(m, s[j]);
        }
        double z = 0;
        for (double& e : s) z += (e = std::exp(e - m));
        for (int64_t e = 0; e < D; ++e) {
          double acc = 0;
          for (int64_t j = 0; j < T; ++j) acc += s[j] / z * v[j][e];
          o[t][h * D + e] = acc;
        }
      }
    }
    Mat att = linear(o, l.wo);
    for (int64_t t = 0; t < T; ++t)
      for (int64_t i = 0; i < C; ++i) x[t][i] += att[t][i];
    Mat u = linear(rms(x, l.ffn_norm), l.w12);
    Mat g(T, std::vector<double>(F));
    for (int64_t t = 0; t < T; ++t)
      for (int64_t i = 0; i < F; ++i) g[t][i] = u[t][i] / (1 + std::exp(-u[t][i])) * u[t][F + i];
    Mat f = linear(g, l.w3);
    for (int64_t t = 0; t < T; ++t)
      for (int64_t i = 0; i < C; ++i) x[t][i] += f[t][i];
  }
  return rms(x, w.final_norm);
}

}  // namespace neodb::encoder::testing
