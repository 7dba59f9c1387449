#include "tests/encoder/cuda_reference.h"

#include <cblas.h>

#include <cmath>

namespace neodb::encoder::testing {
namespace {

constexpr int kD = 64;

void RmsNorm(const float* x, const float* w, int64_t rows, int64_t cols, double eps, float* out) {
  for (int64_t r = 0; r < rows; ++r) {
    double ss = 0;
    for (int64_t c = 0; c < cols; ++c) ss += double(x[r * cols + c]) * x[r * cols + c];
    const float inv = static_cast<float>(1.0 / std::sqrt(ss / cols + eps));
    for (int64_t c = 0; c < cols; ++c) out[r * cols + c] = x[r * cols + c] * inv * w[c];
  }
}

// y[m, n] = x[m, k] · w[n, k]ᵀ + beta · y.
void Linear(const float* x, const Tensor& w, int64_t m, float beta, float* y) {
  const int64_t n = w.dim(0), k = w.dim(1);
  cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, m, n, k, 1.f, x, k, w.data<float>(), k, beta,
              y, n);
}

}  // namespace

void RopeCosSin(int32_t p, int i, float theta, float* cos_out, float* sin_out) {
  const float inv_freq = 1.0f / std::pow(theta, static_cast<float>(2 * i) / static_cast<float>(kD));
  const float angle = static_cast<float>(p) * inv_freq;
  *cos_out = std::cos(angle);
  *sin_out = std::sin(angle);
}

std::vector<float> ReferenceAttention(const std::vector<float>& q, const std::vector<float>& k,
                                      const std::vector<float>& v,
                                      const std::vector<int32_t>& cu_seqlens, int heads,
                                      float scale) {
  std::vector<float> out(q.size(), 0.f);
  const int64_t stride = int64_t{heads} * kD;
  std::vector<double> p;
  for (size_t b = 0; b + 1 < cu_seqlens.size(); ++b) {
    const int64_t s0 = cu_seqlens[b], len = cu_seqlens[b + 1] - s0;
    p.resize(len);
    for (int h = 0; h < heads; ++h) {
      for (int64_t i = 0; i < len; ++i) {
        const float* qi = &q[(s0 + i) * stride + h * kD];
        double mx = -INFINITY;
        for (int64_t j = 0; j < len; ++j) {
          const float* kj = &k[(s0 + j) * stride + h * kD];
          double s = 0;
          for (int d = 0; d < kD; ++d) s += double(qi[d]) * kj[d];
          p[j] = s * scale;
          mx = std::max(mx, p[j]);
        }
        double sum = 0;
        for (int64_t j = 0; j < len; ++j) sum += (p[j] = std::exp(p[j] - mx));
        for (int d = 0; d < kD; ++d) {
          double acc = 0;
          for (int64_t j = 0; j < len; ++j) acc += p[j] * v[(s0 + j) * stride + h * kD + d];
          out[(s0 + i) * stride + h * kD + d] = static_cast<float>(acc / sum);
        }
      }
    }
  }
  return out;
}

std::vector<float> ReferenceHidden(const NeoBertWeights& w, const PackedBatch& batch) {
  const NeoBertConfig& cfg = w.config;
  const int64_t t = batch.total_tokens(), c = cfg.hidden_size, heads = cfg.num_attention_heads;
  const int64_t f = w.layers.at(0).w12.dim(0) / 2;
  const float theta = static_cast<float>(cfg.rope_theta);
  std::vector<float> x(t * c), a(t * c), y(t * 3 * c), q(t * c), k(t * c), v(t * c), u(t * 2 * f),
      g(t * f);
  // 1. Embedding rows.
  for (int64_t i = 0; i < t; ++i) {
    const float* row = w.embeddings.data<float>() + int64_t{batch.ids[i]} * c;
    std::copy(row, row + c, &x[i * c]);
  }
  std::vector<int32_t> cu(batch.offsets.begin(), batch.offsets.end());
  std::vector<int32_t> pos(t);
  for (int64_t b = 0; b < batch.batch_size(); ++b) {
    for (int64_t p = 0; p < batch.length(b); ++p) pos[batch.offsets[b] + p] = p;
  }
  for (const LayerWeights& l : w.layers) {
    RmsNorm(x.data(), l.attention_norm.data<float>(), t, c, cfg.norm_eps, a.data());
    Linear(a.data(), l.qkv, t, 0.f, y.data());
    // Head-interleaved split, RoPE on q and k (adjacent pairs).
    for (int64_t i = 0; i < t; ++i) {
      for (int64_t h = 0; h < heads; ++h) {
        const float* src = &y[i * 3 * c + h * 3 * kD];
        float* qo = &q[i * c + h * kD];
        float* ko = &k[i * c + h * kD];
        float* vo = &v[i * c + h * kD];
        for (int j = 0; j < kD / 2; ++j) {
          float cs, sn;
          RopeCosSin(pos[i], j, theta, &cs, &sn);
          const float q0 = src[2 * j], q1 = src[2 * j + 1];
          const float k0 = src[kD + 2 * j], k1 = src[kD + 2 * j + 1];
          qo[2 * j] = q0 * cs - q1 * sn;
          qo[2 * j + 1] = q0 * sn + q1 * cs;
          ko[2 * j] = k0 * cs - k1 * sn;
          ko[2 * j + 1] = k0 * sn + k1 * cs;
          vo[2 * j] = src[2 * kD + 2 * j];
          vo[2 * j + 1] = src[2 * kD + 2 * j + 1];
        }
      }
    }
    const std::vector<float> o =
        ReferenceAttention(q, k, v, cu, static_cast<int>(heads), 1.f / std::sqrt(float(kD)));
    Linear(o.data(), l.wo, t, 1.f, x.data());
    RmsNorm(x.data(), l.ffn_norm.data<float>(), t, c, cfg.norm_eps, a.data());
    Linear(a.data(), l.w12, t, 0.f, u.data());
    for (int64_t i = 0; i < t; ++i) {
      for (int64_t j = 0; j < f; ++j) {
        const float gate = u[i * 2 * f + j], lin = u[i * 2 * f + f + j];
        g[i * f + j] = gate / (1.f + std::exp(-gate)) * lin;
      }
    }
    Linear(g.data(), l.w3, t, 1.f, x.data());
  }
  std::vector<float> out(t * c);
  RmsNorm(x.data(), w.final_norm.data<float>(), t, c, cfg.norm_eps, out.data());
  return out;
}

std::vector<float> ReferencePool(const std::vector<float>& hidden, int64_t cols,
                                 const PackedBatch& batch, Pooling pooling) {
  std::vector<float> out(batch.batch_size() * cols, 0.f);
  for (int64_t b = 0; b < batch.batch_size(); ++b) {
    for (int64_t col = 0; col < cols; ++col) {
      double s = 0;
      const int64_t n = pooling == Pooling::kCls ? 1 : batch.length(b);
      for (int64_t i = 0; i < n; ++i) s += hidden[(batch.offsets[b] + i) * cols + col];
      out[b * cols + col] = static_cast<float>(s / n);
    }
  }
  return out;
}

}  // namespace neodb::encoder::testing
