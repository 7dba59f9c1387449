#pragma once
// Trainer: the contrastive fine-tuning loop (NEOBERT.md §6) over tokenised
// pairs — deterministic data order from a seed, GradCache steps, global
// gradient clipping, AdamW with warm-up + cosine decay, and checkpoints that
// let --resume continue exactly where a run stopped.
//
// Optionally with an auxiliary MLM objective: each step's loss is then
// InfoNCE + mlm_weight × MLM (one masked corpus batch per step, its own data
// order), both back-propagated into the one encoder, the MLM head trained
// alongside, and the clipping global over encoder and head. Contrastive
// training alone drifts the encoder away from token-level prediction (the
// head no longer fits and fill-mask degrades); the auxiliary loss keeps it.
// Optionally also + distill_weight × a similarity-distillation loss towards
// a teacher embedding (DistillObjective; issue 21), or that loss alone, with
// no pairs (`neodb distill`, issue 45).
//
// Not thread-safe; one Trainer runs one training job.

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "common/status_macros.h"
#include "encoder/train/adamw.h"
#include "encoder/train/distill_objective.h"
#include "encoder/train/grad_cache.h"
#include "encoder/train/known_positives.h"
#include "encoder/train/mlm_objective.h"
#include "encoder/train/pairs.h"
#include "encoder/train/train_device.h"
#include "encoder/train/train_model.h"

namespace neodb::encoder::train {

struct TrainerOptions {
  int64_t steps = 1000;        // optimiser steps in the whole run. Default: 1000
  int64_t batch_size = 32;     // pairs per step (≤ number of pairs). Default: 32
  double lr = 2e-5;            // peak learning rate. Default: 2e-5
  int64_t warmup = 100;        // linear warm-up steps. Default: 100
  double temperature = 0.07;   // InfoNCE τ. Default: 0.07
  int64_t train_layers = 0;    // train only the top N layers + final norm; 0 or N = layers: all
  int64_t chunk_size = 16;     // sequences per forward with activations. Default: 16
  uint64_t seed = 0;           // fixes the data order. Default: 0
  double max_grad_norm = 1.0;  // global clipping threshold. Default: 1.0
  // Hard negatives a pair contributes to a step, drawn afresh each time the
  // pair is drawn from the pair's own list (a mined pool), so a query meets
  // different mistakes of the collection across epochs instead of the same
  // one every time; 0 = all of the list. The draw is a pure function of
  // (seed, step, pair), like the data order, so a resumed run is exact.
  // Default: 0.
  int64_t negatives_per_pair = 0;
  // Matrix entries that are exactly 0 in the starting weights stay 0. A
  // fine-tune starts from a trained checkpoint, where an exact zero is
  // structure, not a value training arrived at: a pruned weight, or the
  // blocks that keep a widened model's extra dims apart from its layers (the
  // default model's GloVe channel). Adam moves every entry by about lr per
  // step whatever its gradient's scale, so without this such blocks fill with
  // noise at once. Only matrices (embeddings, qkv, wo, w12, w3), never norm
  // weights. Default: true.
  bool keep_zero_weights = true;
  // The embedding columns of the pass-through dims (PassThroughDims: no layer
  // reads or writes them) stay exactly as they are. Such a channel carries
  // knowledge put there from outside training (the default model's GloVe
  // vectors, fitted to a teacher); trained on a retrieval loss it drifts
  // towards the training pairs and loses that knowledge, while the layers
  // can still learn. Create fails when the model has no such dims.
  // Default: false.
  bool freeze_channel = false;
  // The sentence vector the losses see (TrainModel's pooling): mean for
  // NeoBERT; a BERT model's own (its sentence-transformers pooling, CLS for
  // BGE). Default: kMean.
  Pooling pooling = Pooling::kMean;
  AdamWOptions adamw;
  // Where the encoder's forward and backward passes run (train_device.h);
  // the losses and AdamW stay on the host. Default: the CPU.
  TrainingDevice device;
  // Weight of the auxiliary MLM loss; used (and must be > 0) when Create is
  // given an MlmObjective. Default: 1.
  double mlm_weight = 1.0;
  // Weight of the distillation loss; used (and must be > 0) when Create is
  // given a DistillObjective. Default: 1.
  double distill_weight = 1.0;
  // Save a checkpoint (weights, optimiser state, step, data-order state) into
  // checkpoint_dir/checkpoint every N steps; 0 = never. Default: 0.
  int64_t checkpoint_every = 0;
  std::string checkpoint_dir;
  // Continue from checkpoint_dir/checkpoint; the run's options must match
  // the ones it was saved with (or the continuation could not be exact).
  bool resume = false;
  // Stop after this step as an interruption would (checkpointing first when
  // checkpoint_dir is set); 0 = run to `steps`. For tests and time-boxed runs.
  int64_t stop_after = 0;
  // When set and it becomes true (e.g. from a SIGINT handler), Run finishes
  // the current step, checkpoints (when checkpoint_dir is set) and returns
  // CANCELLED. Not owned.
  const std::atomic<bool>* cancel = nullptr;
};

struct StepRecord {
  int64_t step = 0;  // 1-based
  double loss = 0;
  double accuracy = 0;  // in-batch top-1 accuracy of the queries
  double lr = 0;
  double grad_norm = 0;     // before clipping (frozen zero weights excluded)
  double mlm_loss = 0;      // auxiliary MLM loss (0 without one)
  double mlm_accuracy = 0;  // its masked-token accuracy
  double distill_loss = 0;  // similarity-distillation loss (0 without one)
  // (query, candidate) pairs left out of the loss as known positives of the
  // query: in-batch false negatives (KnownPositives).
  int64_t known_positives = 0;
  int64_t tokens = 0;  // tokens through the encoder (queries, positives, negatives, MLM batch)
  double seconds = 0;  // wall time of the step
};

// The checks of `options` that need neither the pairs nor the model (steps,
// batch size, learning rate, temperature, chunk size): Trainer::Create runs
// them, and a command can run them before it reads or mines anything.
absl::Status CheckTrainerNumbers(const TrainerOptions& options);

class Trainer {
 public:
  // mlm: the auxiliary MLM objective, or nullptr for contrastive training
  // alone; distill: the distillation objective, or nullptr. `data` may be
  // empty when `distill` is given: the step is then the distillation loss
  // alone (plus the MLM's when given), and batch_size is not used.
  static absl::StatusOr<std::unique_ptr<Trainer>> Create(
      TrainParams<float> params, std::vector<TokenizedPair> data, const TrainerOptions& options,
      std::unique_ptr<MlmObjective> mlm = nullptr,
      std::unique_ptr<DistillObjective> distill = nullptr);

  // Trains from the current step to options.steps (or stop_after), calling
  // on_step after each step.
  absl::Status Run(const std::function<void(const StepRecord&)>& on_step = {});

  const TrainParams<float>& params() const { return params_; }
  const TrainModel<float>& model() const { return *model_; }
  const MlmObjective* mlm() const { return mlm_.get(); }              // nullptr without one
  const DistillObjective* distill() const { return distill_.get(); }  // nullptr without one
  const std::vector<StepRecord>& history() const { return history_; }
  int64_t step() const { return step_; }
  // Matrix entries kept at 0 (TrainerOptions::keep_zero_weights).
  int64_t frozen_zero_weights() const { return frozen_zero_weights_; }
  // Embedding entries of the pass-through channel kept as they are
  // (TrainerOptions::freeze_channel), zeros among them counted above.
  int64_t frozen_channel_weights() const { return frozen_channel_weights_; }
  bool finished() const { return step_ >= options_.steps; }

  // The contrastive batch of 0-based step `step`: epochs are seeded
  // permutations of the pairs; each epoch yields floor(pairs / batch_size)
  // batches (the remainder is dropped so no pair repeats within a batch).
  // Candidates that are known positives of a query are marked `excluded`.
  // REQUIRES: the trainer has pairs.
  ContrastiveBatch BatchForStep(int64_t step) const;

  // Checkpoint I/O (public for tests): checkpoint_dir/checkpoint/{state.json,
  // params.bin, adam_m.bin, adam_v.bin}, replaced atomically.
  absl::Status SaveCheckpointState() const;
  absl::Status LoadCheckpointState();

 private:
  // TrainerOptions::freeze_channel: freezes the embedding columns of the
  // pass-through dims in the optimiser.
  absl::Status FreezeChannel();
  Trainer(TrainParams<float> params, std::vector<TokenizedPair> data,
          const TrainerOptions& options);

  TrainParams<float> params_;
  std::vector<TokenizedPair> data_;
  KnownPositives known_positives_;  // of data_
  TrainerOptions options_;
  std::unique_ptr<TrainModel<float>> model_;
  std::unique_ptr<AdamW> optimizer_;
  int64_t frozen_zero_weights_ = 0;
  int64_t frozen_channel_weights_ = 0;
  std::unique_ptr<MlmObjective> mlm_;
  std::unique_ptr<DistillObjective> distill_;
  std::vector<float> grads_;
  std::vector<StepRecord> history_;
  int64_t step_ = 0;  // steps done
};

}  // namespace neodb::encoder::train
