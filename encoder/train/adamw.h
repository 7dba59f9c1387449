#pragma once
// AdamW (decoupled weight decay), the learning-rate schedule and global
// gradient-norm clipping of the contrastive recipe (NEOBERT.md §6).

#include <cstdint>
#include <functional>
#include <initializer_list>
#include <span>
#include <vector>

#include "encoder/train/train_params.h"

namespace neodb::encoder::train {

struct AdamWOptions {
  double beta1 = 0.9;     // Default: 0.9
  double beta2 = 0.95;    // Default: 0.95
  double epsilon = 1e-8;  // Default: 1e-8
  // Decoupled decay p ← p·(1 − lr·wd), applied to matrices only (embeddings,
  // qkv, wo, w12, w3); norm weights are never decayed — pulling them toward 0
  // would shrink the whole residual branch. Default: 0.01.
  double weight_decay = 0.01;
};

// Optimiser state for the trained tail [begin, layout.total()) of the flat
// parameter buffer. Not thread-safe.
class AdamW {
 public:
  AdamW(const ParamLayout& layout, int64_t begin, const AdamWOptions& options);

  // One update with learning rate `lr`: params[begin + i] from grads[i].
  void Step(float* params, const float* grads, double lr);

  // Marks every entry of the trained range whose index into the full buffer
  // satisfies `pred` as frozen (on top of those frozen before); returns how
  // many it newly froze. A frozen entry stays exactly as it is through Step,
  // weight decay included. Call before the first step.
  int64_t FreezeWhere(const std::function<bool(int64_t index)>& pred);
  // Marks every matrix entry of the trained range that is exactly 0 in
  // `params` (the full buffer) as frozen; returns how many. Call on the
  // weights training starts from.
  int64_t FreezeZeroMatrixEntries(const float* params);
  // Sets the gradients of frozen entries to 0 (before clipping, so that they
  // neither count in the norm nor move m and v).
  void ZeroFrozenGradients(float* grads) const;
  int64_t frozen() const { return frozen_count_; }

  int64_t begin() const { return begin_; }
  int64_t size() const { return static_cast<int64_t>(m_.size()); }
  int64_t step() const { return step_; }
  // State access for checkpoints.
  std::vector<float>& m() { return m_; }
  std::vector<float>& v() { return v_; }
  void set_step(int64_t step) { step_ = step; }

 private:
  AdamWOptions options_;
  int64_t begin_;
  std::vector<uint8_t> decay_;   // per trained element: 1 = matrix
  std::vector<uint8_t> frozen_;  // per trained element: 1 = kept as it is (empty: none)
  int64_t frozen_count_ = 0;
  std::vector<float> m_, v_;
  int64_t step_ = 0;
};

// Learning rate at `step` (1-based) of `total_steps`: linear warm-up from
// peak/warmup to peak over `warmup` steps, then cosine decay from peak to
// 10% of peak at the last step.
double LearningRate(int64_t step, int64_t total_steps, int64_t warmup, double peak);

// Scales grads so that their global L2 norm is at most max_norm; returns the
// norm before clipping.
double ClipGradNorm(float* grads, int64_t n, double max_norm);

// The same over several buffers that one step updates together (an encoder's
// gradients and its MLM head's): one norm over all of them, one scale for
// all. Each buffer's squares are summed on their own, then added in order.
double ClipGradNorm(std::initializer_list<std::span<float>> grads, double max_norm);

}  // namespace neodb::encoder::train
