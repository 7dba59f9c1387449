#include "encoder/train/adamw.h"

#include <algorithm>
#include <cmath>

#include "common/status_macros.h"

namespace neodb::encoder::train {

AdamW::AdamW(const ParamLayout& layout, int64_t begin, const AdamWOptions& options)
    : options_(options), begin_(begin) {
  NEODB_CHECK(begin >= 0 && begin <= layout.total());
  const int64_t n = layout.total() - begin;
  m_.assign(static_cast<size_t>(n), 0.0f);
  v_.assign(static_cast<size_t>(n), 0.0f);
  decay_.assign(static_cast<size_t>(n), 0);
  for (const ParamEntry& e : layout.entries()) {
    if (!e.is_matrix || e.offset + e.numel <= begin) continue;
    const int64_t from = std::max(e.offset, begin) - begin;
    std::fill(decay_.begin() + from, decay_.begin() + (e.offset + e.numel - begin), 1);
  }
}

int64_t AdamW::FreezeWhere(const std::function<bool(int64_t index)>& pred) {
  if (frozen_.empty()) frozen_.assign(decay_.size(), 0);
  int64_t added = 0;
  for (size_t i = 0; i < frozen_.size(); ++i) {
    if (!frozen_[i] && pred(begin_ + static_cast<int64_t>(i))) {
      frozen_[i] = 1;
      ++added;
    }
  }
  frozen_count_ += added;
  if (frozen_count_ == 0) frozen_.clear();
  return added;
}

int64_t AdamW::FreezeZeroMatrixEntries(const float* params) {
  return FreezeWhere([&](int64_t i) { return decay_[i - begin_] && params[i] == 0.0f; });
}

void AdamW::ZeroFrozenGradients(float* grads) const {
  for (size_t i = 0; i < frozen_.size(); ++i) {
    if (frozen_[i]) grads[i] = 0.0f;
  }
}

void AdamW::Step(float* params, const float* grads, double lr) {
  ++step_;
  const double b1 = options_.beta1, b2 = options_.beta2;
  const double bc1 = 1 - std::pow(b1, static_cast<double>(step_));
  const double bc2 = 1 - std::pow(b2, static_cast<double>(step_));
  const float step_size = static_cast<float>(lr / bc1);
  const float inv_sqrt_bc2 = static_cast<float>(1 / std::sqrt(bc2));
  const float eps = static_cast<float>(options_.epsilon);
  const float decay = static_cast<float>(1 - lr * options_.weight_decay);
  const float fb1 = static_cast<float>(b1), fb2 = static_cast<float>(b2);
  float* p = params + begin_;
  const int64_t n = size();
  const bool any_frozen = !frozen_.empty();
  for (int64_t i = 0; i < n; ++i) {
    if (any_frozen && frozen_[i]) continue;  // m, v and the entry stay as they are
    const float g = grads[i];
    m_[i] = fb1 * m_[i] + (1 - fb1) * g;
    v_[i] = fb2 * v_[i] + (1 - fb2) * g * g;
    if (decay_[i]) p[i] *= decay;
    p[i] -= step_size * m_[i] / (std::sqrt(v_[i]) * inv_sqrt_bc2 + eps);
  }
}

double LearningRate(int64_t step, int64_t total_steps, int64_t warmup, double peak) {
  if (warmup > 0 && step <= warmup) return peak * static_cast<double>(step) / warmup;
  const int64_t decay_steps = total_steps - warmup;
  if (decay_steps <= 0) return peak;
  const double progress =
      std::clamp(static_cast<double>(step - warmup) / static_cast<double>(decay_steps), 0.0, 1.0);
  constexpr double kFloor = 0.1;
  return peak * (kFloor + (1 - kFloor) * 0.5 * (1 + std::cos(M_PI * progress)));
}

double ClipGradNorm(float* grads, int64_t n, double max_norm) {
  return ClipGradNorm({std::span<float>(grads, static_cast<size_t>(n))}, max_norm);
}

double ClipGradNorm(std::initializer_list<std::span<float>> grads, double max_norm) {
  double total = 0;
  for (std::span<float> g : grads) {
    double ss = 0;
    for (float x : g) ss += static_cast<double>(x) * x;
    total += ss;
  }
  const double norm = std::sqrt(total);
  if (norm > max_norm && norm > 0) {
    const float scale = static_cast<float>(max_norm / norm);
    for (std::span<float> g : grads) {
      for (float& x : g) x *= scale;
    }
  }
  return norm;
}

}  // namespace neodb::encoder::train
