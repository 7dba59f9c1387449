// neodb pretrain: masked-language-model pre-training (NEOBERT.md §6) of a
// checkpoint directory on a plain-text corpus; writes a checkpoint with its
// MLM head (decoder.weight, decoder.bias) and the tokenizer.
// neodb fill-mask: what that head predicts at [MASK] positions.
#include <cblas.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <system_error>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "common/env.h"
#include "common/status_macros.h"
#include "encoder/checkpoint/weights.h"
#include "encoder/default_model_dir.h"
#include "encoder/tokenizer/tokenizer.h"
#include "encoder/model.h"
#include "encoder/train/finetune.h"
#include "encoder/train/mask_predictor.h"
#include "encoder/train/mlm_pretrainer.h"
#include "encoder/train/train_model.h"
#include "encoder/train/train_device.h"
#include "encoder/train/train_params.h"
#include "tools/neodb/commands.h"

namespace neodb::cli {
namespace {

namespace fs = std::filesystem;
using encoder::NeoBertConfig;
using encoder::NeoBertWeights;
using encoder::train::MlmPretrainer;
using encoder::train::PretrainOptions;
using encoder::train::PretrainStepRecord;

struct PretrainArgs {
  std::string model_dir;
  std::string corpus;
  std::string out_dir;
  PretrainOptions options;
  int threads = 0;
  int64_t log_every = 10;
  bool force = false;
  std::string device = "cpu";
};

double Seconds(std::chrono::steady_clock::time_point since) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - since).count();
}

absl::Status Pretrain(PretrainArgs a) {
  const auto t0 = std::chrono::steady_clock::now();
  a.options.device = ResolveTrainingDeviceOrExit("pretrain", a.device);
  std::error_code ec;
  if (fs::exists(a.out_dir, ec) && !fs::is_empty(a.out_dir, ec) && !a.force) {
    return absl::InvalidArgumentError(
        absl::StrCat(a.out_dir, " exists and is not empty (use --force to replace it)"));
  }
  if (a.threads > 0) openblas_set_num_threads(a.threads);
  ASSIGN_OR_RETURN(const encoder::Architecture arch, encoder::ReadArchitecture(a.model_dir));
  if (arch != encoder::Architecture::kNeoBert) {
    // The MLM pre-training (its untied decoder head) is written for NeoBERT;
    // a BERT fine-tunes (finetune, distill, adapt) but does not pre-train.
    return absl::FailedPreconditionError(absl::StrCat(
        a.model_dir, " is a ", std::string(encoder::ArchitectureName(arch)),
        " model: neodb pretrain (MLM) trains NeoBERT checkpoints only; fine-tune it with neodb "
        "finetune, distill or adapt"));
  }
  ASSIGN_OR_RETURN(const NeoBertConfig config,
                   NeoBertConfig::FromFile(a.model_dir + "/config.json"));
  ASSIGN_OR_RETURN(std::unique_ptr<encoder::Tokenizer> tokenizer,
                   encoder::LoadTokenizer(a.model_dir));
  if (tokenizer->vocab_size() != config.vocab_size) {
    return absl::InvalidArgumentError(
        absl::StrCat("the tokenizer in ", a.model_dir, " has ", tokenizer->vocab_size(),
                     " tokens but config.json says vocab_size ", config.vocab_size));
  }
  // Start from the checkpoint's weights when there are any, else from the
  // NeoBERT initialisation (uniform ±0.02, norms at 1) drawn with --seed.
  NeoBertWeights weights;
  ASSIGN_OR_RETURN(const std::string weights_path, encoder::WeightsFilePath(a.model_dir));
  if (fs::exists(weights_path, ec)) {
    encoder::LoadOptions load;
    load.load_decoder = true;
    ASSIGN_OR_RETURN(weights, encoder::LoadCheckpoint(a.model_dir, load));
    if (!weights.decoder_weight || !weights.decoder_bias) {
      NeoBertWeights fresh = encoder::RandomWeights(config, a.options.seed, true);
      weights.decoder_weight = std::move(fresh.decoder_weight);
      weights.decoder_bias = std::move(fresh.decoder_bias);
      std::printf("%s has no MLM head: a random one is trained\n", a.model_dir.c_str());
    }
  } else {
    weights = encoder::RandomWeights(config, a.options.seed, true);
    std::printf("no model.safetensors in %s: random initialisation (seed %llu)\n",
                a.model_dir.c_str(), static_cast<unsigned long long>(a.options.seed));
  }

  const auto t_tok = std::chrono::steady_clock::now();
  ASSIGN_OR_RETURN(std::vector<int32_t> stream,
                   encoder::train::TokenizeCorpus(a.corpus, *tokenizer));
  std::printf("corpus %s: %zu tokens (tokenised in %.1f s)\n", a.corpus.c_str(), stream.size(),
              Seconds(t_tok));

  encoder::train::TrainParams<float> params = encoder::train::ParamsFromWeights(weights);
  const int64_t encoder_params = static_cast<int64_t>(params.values.size());
  ASSIGN_OR_RETURN(std::unique_ptr<MlmPretrainer> trainer,
                   MlmPretrainer::Create(std::move(params),
                                         encoder::train::TensorToVector(*weights.decoder_weight),
                                         encoder::train::TensorToVector(*weights.decoder_bias),
                                         std::move(stream), tokenizer->special(), a.options));
  std::printf(
      "model: %lld layers x %lld wide, %lld heads, FFN %lld, vocab %lld: %lld encoder + %lld head "
      "parameters; %lld training sequences of %lld tokens; start at step %lld of %lld\n",
      static_cast<long long>(config.num_hidden_layers), static_cast<long long>(config.hidden_size),
      static_cast<long long>(config.num_attention_heads), static_cast<long long>(config.ffn_dim()),
      static_cast<long long>(config.vocab_size), static_cast<long long>(encoder_params),
      static_cast<long long>(config.vocab_size * (config.hidden_size + 1)),
      static_cast<long long>(trainer->num_chunks()), static_cast<long long>(a.options.seq_len),
      static_cast<long long>(trainer->step()), static_cast<long long>(a.options.steps));

  const PretrainStepRecord before = trainer->Evaluate(a.options.seed + 7);
  std::printf("held-out MLM before: loss %.4f, accuracy %.4f (%lld masked tokens)\n", before.loss,
              before.accuracy, static_cast<long long>(before.masked));
  std::fflush(stdout);

  // loss.csv grows a line a step and carries over a --resume: appended
  // through the Env (a full disk is RESOURCE_EXHAUSTED, and fails the run).
  std::unique_ptr<WritableFile> log;
  absl::Status log_status;
  if (!a.options.checkpoint_dir.empty()) {
    RETURN_IF_ERROR(Env::Default()->CreateDir(a.options.checkpoint_dir));
    ASSIGN_OR_RETURN(log,
                     Env::Default()->NewAppendableFile(a.options.checkpoint_dir + "/loss.csv"));
  }
  const auto t_train = std::chrono::steady_clock::now();
  // Process CPU time as well as wall time: on a shared machine the wall
  // time says more about the neighbours than about the model.
  const std::clock_t cpu_train = std::clock();
  int64_t tokens = 0, steps_run = 0;
  double window_loss = 0, window_acc = 0;
  int64_t window = 0;
  const absl::Status run = trainer->Run([&](const PretrainStepRecord& r) {
    tokens += r.tokens;
    ++steps_run;
    window_loss += r.loss;
    window_acc += r.accuracy;
    ++window;
    if (log != nullptr && log_status.ok()) {
      log_status = log->Append(absl::StrFormat(
          "%lld,%.6f,%.6f,%.3e,%.4f,%lld,%.3f\n", static_cast<long long>(r.step), r.loss,
          r.accuracy, r.lr, r.grad_norm, static_cast<long long>(r.tokens), r.seconds));
    }
    if (r.step % a.log_every == 0 || r.step == a.options.steps) {
      const double elapsed = Seconds(t_train);
      std::printf(
          "step %lld: loss %.4f acc %.4f (mean of last %lld) lr %.2e |g| %.3f  %.0f tok/s\n",
          static_cast<long long>(r.step), window_loss / window, window_acc / window,
          static_cast<long long>(window), r.lr, r.grad_norm, tokens / elapsed);
      std::fflush(stdout);
      window_loss = window_acc = 0;
      window = 0;
    }
  });
  if (log != nullptr && log_status.ok()) log_status = log->Close();
  RETURN_IF_ERROR(run);
  RETURN_IF_ERROR(log_status);
  const double train_seconds = Seconds(t_train);
  const double cpu_seconds = static_cast<double>(std::clock() - cpu_train) / CLOCKS_PER_SEC;

  const PretrainStepRecord after = trainer->Evaluate(a.options.seed + 7);
  std::printf("held-out MLM after step %lld: loss %.4f, accuracy %.4f\n",
              static_cast<long long>(trainer->step()), after.loss, after.accuracy);

  NeoBertWeights out = encoder::train::WeightsFromParams(trainer->params(), weights);
  out.decoder_weight = encoder::train::VectorToTensor(trainer->decoder_weight(),
                                                      {config.vocab_size, config.hidden_size});
  out.decoder_bias = encoder::train::VectorToTensor(trainer->decoder_bias(), {config.vocab_size});
  RETURN_IF_ERROR(Env::Default()->CreateDir(a.out_dir));
  RETURN_IF_ERROR(encoder::SaveCheckpoint(out, a.out_dir));
  RETURN_IF_ERROR(tokenizer->SaveTo(a.out_dir));
  std::printf(
      "wrote %s: %lld steps this run, %lld tokens, %.1f s training (%.0f tok/s wall), "
      "%.1f CPU-s (%.0f tok per CPU-s), %.1f s total\n",
      a.out_dir.c_str(), static_cast<long long>(steps_run), static_cast<long long>(tokens),
      train_seconds, tokens / train_seconds, cpu_seconds, tokens / cpu_seconds, Seconds(t0));
  return absl::OkStatus();
}

struct FillMaskArgs {
  std::string model_dir;
  std::vector<std::string> texts;
  int top_k = 5;
};

// Prints the top_k tokens the MLM head predicts at every [MASK] of each text:
// the quick sanity check of a pre-trained model ("paris is the capital of
// [MASK]." should rank "france" high).
absl::Status FillMask(const FillMaskArgs& a) {
  ASSIGN_OR_RETURN(const std::string model_dir, encoder::ResolveModelDir(a.model_dir));
  ASSIGN_OR_RETURN(std::unique_ptr<encoder::train::MaskPredictor> predictor,
                   encoder::train::MaskPredictor::Open(model_dir));
  for (const std::string& text : a.texts) {
    absl::StatusOr<std::vector<encoder::train::MaskScores>> masks = predictor->Predict(text);
    if (!masks.ok()) {
      return absl::Status(masks.status().code(),
                          absl::StrCat("\"", text, "\": ", masks.status().message()));
    }
    std::printf("%s\n", text.c_str());
    if (masks->empty()) std::printf("  (no [MASK] token in this text)\n");
    for (const encoder::train::MaskScores& m : *masks) {
      std::vector<int32_t> order(m.logits.size());
      for (size_t t = 0; t < order.size(); ++t) order[t] = static_cast<int32_t>(t);
      const int top = std::min<int>(a.top_k, static_cast<int>(order.size()));
      std::partial_sort(order.begin(), order.begin() + top, order.end(),
                        [&](int32_t x, int32_t y) { return m.logits[x] > m.logits[y]; });
      std::printf("  [MASK] at %lld:", static_cast<long long>(m.position));
      for (int i = 0; i < top; ++i) {
        std::printf(" %s(%.2f)", predictor->tokenizer().IdToToken(order[i]).c_str(),
                    m.logits[order[i]]);
      }
      std::printf("\n");
    }
  }
  return absl::OkStatus();
}

}  // namespace

void RegisterPretrainCommands(CLI::App& app) {
  auto fill = std::make_shared<FillMaskArgs>();
  CLI::App* fill_cmd = app.add_subcommand(
      "fill-mask", "Top predictions of a checkpoint's MLM head at each [MASK] of some texts");
  fill_cmd->add_option(
      "--model", fill->model_dir,
      "Checkpoint directory with an MLM head (default: the shipped default model)");
  fill_cmd->add_option("--top-k", fill->top_k, "Predictions per [MASK]")
      ->capture_default_str()
      ->check(CLI::Range(1, 100));
  fill_cmd->add_option("texts", fill->texts, "Texts containing [MASK]")->required();
  fill_cmd->callback([fill] { ExitIfError(FillMask(*fill)); });

  auto args = std::make_shared<PretrainArgs>();
  PretrainOptions& o = args->options;
  CLI::App* cmd = app.add_subcommand(
      "pretrain",
      "Masked-language-model pre-training (20% of tokens masked, all [MASK], untied MLM head)");
  cmd->add_option("--model", args->model_dir,
                  "Checkpoint directory: config.json and a tokenizer; model.safetensors is "
                  "optional (random initialisation without it)")
      ->required();
  cmd->add_option("--corpus", args->corpus, "Plain text, one paragraph per line")
      ->required()
      ->check(CLI::ExistingFile);
  cmd->add_option("--out", args->out_dir, "Output checkpoint directory")->required();
  cmd->add_option("--steps", o.steps, "Optimiser steps")->capture_default_str();
  cmd->add_option("--batch-tokens", o.batch_tokens, "Tokens per step (multiple of --seq-len)")
      ->capture_default_str();
  cmd->add_option("--seq-len", o.seq_len, "Tokens per sequence, [CLS]/[SEP] included")
      ->capture_default_str();
  cmd->add_option("--micro-batch-tokens", o.micro_batch_tokens,
                  "Tokens per forward/backward (bounds activation memory)")
      ->capture_default_str();
  cmd->add_option("--lr", o.lr, "Peak learning rate")->capture_default_str();
  cmd->add_option("--warmup", o.warmup, "Warm-up steps (0 = steps/20)")->capture_default_str();
  cmd->add_option("--mask-rate", o.mask_rate, "Fraction of tokens masked")->capture_default_str();
  cmd->add_option("--seed", o.seed, "Seed of initialisation, data order and masks")
      ->capture_default_str();
  cmd->add_option("--weight-decay", o.adamw.weight_decay, "AdamW weight decay (matrices)")
      ->capture_default_str();
  cmd->add_option("--checkpoint-dir", o.checkpoint_dir,
                  "Directory for resumable state and loss.csv");
  cmd->add_option("--checkpoint-every", o.checkpoint_every, "Steps between checkpoints (0 = none)")
      ->capture_default_str();
  cmd->add_flag("--resume", o.resume, "Continue from --checkpoint-dir");
  cmd->add_option("--stop-after", o.stop_after, "Stop after this step (time-boxed runs)");
  cmd->add_flag("--freeze-encoder", o.freeze_encoder,
                "Train the MLM head only (re-fit the head of a fine-tuned encoder)");
  cmd->add_option("--threads", args->threads, "OpenBLAS threads (0 = default)");
  cmd->add_option("--log-every", args->log_every, "Steps between progress lines")
      ->capture_default_str();
  cmd->add_flag("--force", args->force, "Replace a non-empty --out");
  cmd->add_option("--device", args->device,
                  "cpu (default), cuda or cuda:N (the encoder's forward and backward on that GPU, "
                  "F32; an error where there is none), or auto (the CPU: CUDA training is opt-in)")
      ->capture_default_str();
  cmd->callback([args] { ExitIfError(Pretrain(*args)); });
}

}  // namespace neodb::cli
