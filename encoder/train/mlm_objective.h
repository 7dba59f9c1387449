#pragma once
// MlmObjective: the masked-language-model loss (NEOBERT.md §6) as an
// objective a training loop adds to its step. It owns everything that is the
// MLM's own: the data (a token stream cut into framed chunks, a seeded
// order, seeded masks), the MLM head (decoder.weight [V, C], decoder.bias
// [V], untied) and the head's AdamW state. The encoder, its optimiser and the
// step's gradient clipping belong to the loop.
//
// Two loops use it: MlmPretrainer (the MLM alone) and the contrastive Trainer
// (InfoNCE + weight × MLM, so that fine-tuning for retrieval keeps the
// encoder's token-level knowledge and a head that matches it).
//
// Data: the corpus stream is cut into chunks of seq_len − 2 tokens, each
// framed as [CLS] chunk [SEP]; the last min(256, 1%) chunks are held out
// for Evaluate. Step s takes batch_tokens / seq_len chunks from a seeded
// per-epoch permutation and masks each micro-batch with a seed derived from
// (seed, s): the data of a step is a pure function of (seed, step), so a
// resumed run continues exactly.
//
// Not thread-safe.

#include <cstdint>
#include <filesystem>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "common/env.h"
#include "common/status_macros.h"
#include "encoder/checkpoint/config.h"
#include "encoder/tokenizer/tokenizer.h"
#include "encoder/train/adamw.h"
#include "encoder/train/mlm_head.h"
#include "encoder/train/train_model.h"
#include "nlohmann/json.hpp"

namespace neodb::encoder::train {

struct MlmObjectiveOptions {
  int64_t batch_tokens = 8192;        // tokens per step (a multiple of seq_len). Default: 8192
  int64_t seq_len = 128;              // tokens per sequence, [CLS]/[SEP] included. Default: 128
  int64_t micro_batch_tokens = 2048;  // tokens per forward/backward. Default: 2048
  double mask_rate = 0.2;             // Default: 0.2 (NeoBERT)
  uint64_t seed = 0;                  // data order and masks. Default: 0
  AdamWOptions adamw;                 // the head's optimiser (decay on the weight only)
};

struct MlmStepLoss {
  double loss = 0;      // mean cross-entropy over the masked tokens
  double accuracy = 0;  // masked tokens whose arg-max is right
  int64_t tokens = 0;   // tokens run through the encoder
  int64_t masked = 0;
};

class MlmObjective {
 public:
  // decoder_weight [V, C], decoder_bias [V] for `config`; stream: the corpus
  // as TokenizeCorpus returns it, at least one step of training chunks.
  static absl::StatusOr<std::unique_ptr<MlmObjective>> Create(const NeoBertConfig& config,
                                                              std::vector<float> decoder_weight,
                                                              std::vector<float> decoder_bias,
                                                              std::vector<int32_t> stream,
                                                              const SpecialTokens& special,
                                                              const MlmObjectiveOptions& options);

  // The framed sequences of 0-based step `step` (before masking).
  PackedBatch BatchForStep(int64_t step) const;

  // Sets the head gradients to those of grad_scale × (the mean masked-token
  // loss of step `step`'s batch) and ADDS the encoder's gradients (flat
  // offsets >= grad_begin) into enc_grads[offset - grad_begin]. enc_grads ==
  // nullptr: the encoder is frozen (forward only, no activations kept).
  MlmStepLoss AccumulateStep(const TrainModel<float>& model, const float* params, int64_t step,
                             float grad_scale, int64_t grad_begin, float* enc_grads);

  // The current step's head gradients (weight, bias), for the loop's global
  // clipping.
  std::span<float> head_weight_grads() { return head_gw_; }
  std::span<float> head_bias_grads() { return head_gb_; }
  // One AdamW step of the head with the current gradients; t is 1-based.
  void UpdateHead(double lr, int64_t t);

  // Loss and accuracy (no gradient) on the held-out chunks masked with `seed`.
  MlmStepLoss Evaluate(const TrainModel<float>& model, const float* params, uint64_t seed) const;

  const std::vector<float>& decoder_weight() const { return head_w_; }
  const std::vector<float>& decoder_bias() const { return head_b_; }
  int64_t num_chunks() const { return num_chunks_; }
  const MlmObjectiveOptions& options() const { return options_; }

  // The settings and data size a resumed run must share with its checkpoint.
  nlohmann::json Identity() const;
  // The head and its optimiser moments as head_*.bin files in `dir`.
  absl::Status SaveState(const std::filesystem::path& dir) const;
  absl::Status LoadState(const std::filesystem::path& dir);

 private:
  MlmObjective(std::vector<float> decoder_weight, std::vector<float> decoder_bias,
               std::vector<int32_t> stream, const SpecialTokens& special,
               const MlmObjectiveOptions& options, int64_t vocab, int64_t hidden);
  // Loss of one masked micro-batch. With head_gw/head_gb non-null, adds the
  // gradients of grad_scale × that loss into them and, when enc_grads is
  // non-null, into the encoder's (see AccumulateStep).
  MlmLossResult MicroStep(const TrainModel<float>& model, const float* params,
                          const PackedBatch& batch, uint64_t mask_seed, float grad_scale,
                          int64_t grad_begin, float* enc_grads, float* head_gw,
                          float* head_gb) const;
  PackedBatch SequencesFromChunks(const std::vector<int64_t>& chunks) const;
  std::vector<int64_t> EpochOrder(int64_t epoch) const;

  std::vector<float> head_w_, head_b_;
  std::vector<int32_t> stream_;
  SpecialTokens special_;
  MlmMaskOptions mask_;
  MlmObjectiveOptions options_;
  int64_t vocab_ = 0, hidden_ = 0;
  std::vector<float> head_gw_, head_gb_;  // the current step's head gradients
  std::vector<float> head_m_w_, head_v_w_, head_m_b_, head_v_b_;
  int64_t num_chunks_ = 0;       // training chunks
  int64_t held_out_chunks_ = 0;  // after the training chunks
};

// Tokenises `path` line by line (Tokenize, no specials) into one stream.
// Blank lines are skipped; invalid UTF-8 on a line is an error naming it.
absl::StatusOr<std::vector<int32_t>> TokenizeCorpus(const std::string& path,
                                                    const Tokenizer& tokenizer,
                                                    Env* env = Env::Default());

}  // namespace neodb::encoder::train
