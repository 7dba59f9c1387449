#pragma once
// MlmPretrainer: masked-language-model pre-training (NEOBERT.md §6) of the
// encoder plus its MLM head (decoder.weight [V, C], decoder.bias [V], untied),
// on the training engine's TrainModel (forward with activations, backward
// from the per-token hidden-state gradient). The data, masking and head are
// MlmObjective's (encoder/train/mlm_objective.h); this loop adds the
// encoder's optimiser, global clipping over encoder and head, AdamW (β
// 0.9/0.95, ε 1e-8, wd 0.01 on matrices), linear warm-up and cosine decay to
// 10% of the peak, and checkpoints. The data of step s is a pure function
// of (seed, s), so --resume is exact.
//
// Not thread-safe; one MlmPretrainer runs one job.

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "common/status_macros.h"
#include "encoder/tokenizer/tokenizer.h"
#include "encoder/train/adamw.h"
#include "encoder/train/mlm_head.h"
#include "encoder/train/mlm_objective.h"
#include "encoder/train/train_device.h"
#include "encoder/train/train_model.h"
#include "nlohmann/json.hpp"

namespace neodb::encoder::train {

struct PretrainOptions {
  int64_t steps = 1000;               // optimiser steps. Default: 1000
  int64_t batch_tokens = 8192;        // tokens per step (a multiple of seq_len). Default: 8192
  int64_t seq_len = 128;              // tokens per sequence, [CLS]/[SEP] included. Default: 128
  int64_t micro_batch_tokens = 2048;  // tokens per forward/backward. Default: 2048
  double lr = 6e-4;                   // peak learning rate. Default: 6e-4
  int64_t warmup = 0;                 // warm-up steps; 0 = steps / 20. Default: 0
  double mask_rate = 0.2;             // Default: 0.2 (NeoBERT)
  uint64_t seed = 0;                  // data order and masks. Default: 0
  double max_grad_norm = 1.0;         // Default: 1.0
  AdamWOptions adamw;
  // Where the encoder's passes run (train_device.h). Default: the CPU.
  TrainingDevice device;
  // Every N steps save checkpoint_dir/checkpoint (weights, head, optimiser
  // state, step); 0 = never. Default: 0.
  int64_t checkpoint_every = 0;
  std::string checkpoint_dir;
  bool resume = false;     // continue from checkpoint_dir/checkpoint
  int64_t stop_after = 0;  // stop (checkpointing) after this step; 0 = run to `steps`
  // Train the MLM head only; the encoder is frozen (forward without
  // activations, no encoder update). Re-fits a head to an encoder that
  // contrastive fine-tuning has moved away from its pre-training head.
  bool freeze_encoder = false;
};

struct PretrainStepRecord {
  int64_t step = 0;     // 1-based
  double loss = 0;      // mean cross-entropy over the step's masked tokens
  double accuracy = 0;  // masked tokens whose arg-max is right
  double lr = 0;
  double grad_norm = 0;  // before clipping
  int64_t tokens = 0;
  int64_t masked = 0;
  double seconds = 0;
};

class MlmPretrainer {
 public:
  // params: the encoder; decoder_weight [V, C] and decoder_bias [V]. stream:
  // TokenizeCorpus output, at least batch_tokens / seq_len chunks.
  static absl::StatusOr<std::unique_ptr<MlmPretrainer>> Create(
      TrainParams<float> params, std::vector<float> decoder_weight, std::vector<float> decoder_bias,
      std::vector<int32_t> stream, const SpecialTokens& special, const PretrainOptions& options);

  absl::Status Run(const std::function<void(const PretrainStepRecord&)>& on_step = {});

  // Masked-token loss and accuracy (no gradient) on the held-out chunks: the
  // last min(256, 1%) chunks of the stream, never used for training, masked
  // with `seed`. For before/after comparisons.
  PretrainStepRecord Evaluate(uint64_t seed);

  const TrainParams<float>& params() const { return params_; }
  const std::vector<float>& decoder_weight() const { return objective_->decoder_weight(); }
  const std::vector<float>& decoder_bias() const { return objective_->decoder_bias(); }
  const std::vector<PretrainStepRecord>& history() const { return history_; }
  int64_t step() const { return step_; }
  int64_t num_chunks() const { return objective_->num_chunks(); }

  // The framed sequences of 0-based step `step` (before masking).
  PackedBatch BatchForStep(int64_t step) const { return objective_->BatchForStep(step); }

  absl::Status SaveCheckpointState() const;
  absl::Status LoadCheckpointState();

 private:
  MlmPretrainer(TrainParams<float> params, std::unique_ptr<MlmObjective> objective,
                const PretrainOptions& options);
  // The settings and data a checkpoint must share with a --resume run for
  // the continuation to be exact.
  nlohmann::json RunIdentity() const;

  TrainParams<float> params_;
  std::unique_ptr<MlmObjective> objective_;
  PretrainOptions options_;
  std::unique_ptr<TrainModel<float>> model_;
  std::unique_ptr<AdamW> optimizer_;
  std::vector<float> enc_grads_;
  std::vector<PretrainStepRecord> history_;
  int64_t step_ = 0;
};

}  // namespace neodb::encoder::train
