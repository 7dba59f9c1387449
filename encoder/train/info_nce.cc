#include "encoder/train/info_nce.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "common/status_macros.h"

namespace neodb::encoder::train {
namespace {

// Normalises rows of x into n; returns the norms (floored to avoid 0/0).
template <typename T>
std::vector<double> Normalize(const T* x, int64_t rows, int64_t dim, double* n) {
  std::vector<double> norms(static_cast<size_t>(rows));
  for (int64_t r = 0; r < rows; ++r) {
    double ss = 0;
    for (int64_t c = 0; c < dim; ++c) ss += static_cast<double>(x[r * dim + c]) * x[r * dim + c];
    norms[r] = std::max(std::sqrt(ss), 1e-12);
    for (int64_t c = 0; c < dim; ++c) n[r * dim + c] = x[r * dim + c] / norms[r];
  }
  return norms;
}

// d x = (dn − n (n·dn)) / |x|: the backward pass of x ↦ x / |x|.
template <typename T>
void NormalizeBackward(const double* n, const std::vector<double>& norms, const double* dn,
                       int64_t rows, int64_t dim, T* dx) {
  for (int64_t r = 0; r < rows; ++r) {
    double dot = 0;
    for (int64_t c = 0; c < dim; ++c) dot += n[r * dim + c] * dn[r * dim + c];
    for (int64_t c = 0; c < dim; ++c) {
      dx[r * dim + c] = static_cast<T>((dn[r * dim + c] - n[r * dim + c] * dot) / norms[r]);
    }
  }
}

}  // namespace

template <typename T>
InfoNceResult InfoNce(const T* queries, const T* positives, int64_t batch, const T* negatives,
                      int64_t num_negatives, int64_t dim, double temperature, T* d_queries,
                      T* d_positives, T* d_negatives, const uint8_t* excluded) {
  NEODB_CHECK(batch >= 1 && temperature > 0);
  const int64_t num_cand = batch + num_negatives;
  std::vector<double> qn(static_cast<size_t>(batch * dim));
  std::vector<double> cn(static_cast<size_t>(num_cand * dim));
  const std::vector<double> q_norms = Normalize(queries, batch, dim, qn.data());
  const std::vector<double> p_norms = Normalize(positives, batch, dim, cn.data());
  std::vector<double> n_norms;
  if (num_negatives > 0)
    n_norms = Normalize(negatives, num_negatives, dim, cn.data() + batch * dim);

  // Row-wise softmax of the logits over the candidates kept; dlogits =
  // (softmax − onehot) / B, and 0 for a candidate left out.
  InfoNceResult result;
  std::vector<double> dlogits(static_cast<size_t>(batch * num_cand));
  for (int64_t i = 0; i < batch; ++i) {
    double* row = dlogits.data() + i * num_cand;
    const uint8_t* out = excluded == nullptr ? nullptr : excluded + i * num_cand;
    const auto kept = [out](int64_t j) { return out == nullptr || out[j] == 0; };
    NEODB_CHECK(kept(i));
    double mx = -std::numeric_limits<double>::infinity();
    for (int64_t j = 0; j < num_cand; ++j) {
      double dot = 0;
      for (int64_t c = 0; c < dim; ++c) dot += qn[i * dim + c] * cn[j * dim + c];
      row[j] = dot / temperature;
      if (kept(j)) mx = std::max(mx, row[j]);
    }
    bool top = true;
    double sum = 0;
    for (int64_t j = 0; j < num_cand; ++j) {
      if (!kept(j)) {
        ++result.excluded;
        continue;
      }
      if (j != i && row[j] >= row[i]) top = false;
      sum += std::exp(row[j] - mx);
    }
    result.loss += (mx + std::log(sum) - row[i]) / static_cast<double>(batch);
    result.accuracy += top ? 1.0 / static_cast<double>(batch) : 0.0;
    for (int64_t j = 0; j < num_cand; ++j) {
      row[j] = kept(j) ? (std::exp(row[j] - mx) / sum - (j == i ? 1.0 : 0.0)) /
                             static_cast<double>(batch)
                       : 0.0;
    }
  }
  // dqn = dlogits · cn / τ;  dcn = dlogitsᵀ · qn / τ.
  std::vector<double> dqn(qn.size(), 0.0);
  std::vector<double> dcn(cn.size(), 0.0);
  for (int64_t i = 0; i < batch; ++i) {
    for (int64_t j = 0; j < num_cand; ++j) {
      const double g = dlogits[i * num_cand + j] / temperature;
      for (int64_t c = 0; c < dim; ++c) {
        dqn[i * dim + c] += g * cn[j * dim + c];
        dcn[j * dim + c] += g * qn[i * dim + c];
      }
    }
  }
  NormalizeBackward(qn.data(), q_norms, dqn.data(), batch, dim, d_queries);
  NormalizeBackward(cn.data(), p_norms, dcn.data(), batch, dim, d_positives);
  if (num_negatives > 0) {
    NormalizeBackward(cn.data() + batch * dim, n_norms, dcn.data() + batch * dim, num_negatives,
                      dim, d_negatives);
  }
  return result;
}

template InfoNceResult InfoNce<float>(const float*, const float*, int64_t, const float*, int64_t,
                                      int64_t, double, float*, float*, float*, const uint8_t*);
template InfoNceResult InfoNce<double>(const double*, const double*, int64_t, const double*,
                                       int64_t, int64_t, double, double*, double*, double*,
                                       const uint8_t*);

}  // namespace neodb::encoder::train
