#include "encoder/train/mlm_pretrainer.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <string>

#include "absl/strings/str_cat.h"
#include "common/env.h"
#include "encoder/train/checkpoint_dir.h"
#include "encoder/train/float_file.h"
#include "nlohmann/json.hpp"

namespace neodb::encoder::train {
namespace {

namespace fs = std::filesystem;
constexpr char kStateFormat[] = "neodb-mlm-pretrain-1";

MlmObjectiveOptions ObjectiveOptions(const PretrainOptions& o) {
  MlmObjectiveOptions m;
  m.batch_tokens = o.batch_tokens;
  m.seq_len = o.seq_len;
  m.micro_batch_tokens = o.micro_batch_tokens;
  m.mask_rate = o.mask_rate;
  m.seed = o.seed;
  m.adamw = o.adamw;
  return m;
}

}  // namespace

MlmPretrainer::MlmPretrainer(TrainParams<float> params, std::unique_ptr<MlmObjective> objective,
                             const PretrainOptions& options)
    : params_(std::move(params)), objective_(std::move(objective)), options_(options) {
  model_ = std::make_unique<TrainModel<float>>(params_.layout);
  optimizer_ = std::make_unique<AdamW>(params_.layout, 0, options_.adamw);
  enc_grads_.assign(params_.values.size(), 0.0f);
  if (options_.warmup <= 0) options_.warmup = std::max<int64_t>(1, options_.steps / 20);
}

absl::StatusOr<std::unique_ptr<MlmPretrainer>> MlmPretrainer::Create(
    TrainParams<float> params, std::vector<float> decoder_weight, std::vector<float> decoder_bias,
    std::vector<int32_t> stream, const SpecialTokens& special, const PretrainOptions& options) {
  if (options.steps <= 0) return absl::InvalidArgumentError("--steps must be positive");
  if (!(options.lr > 0)) return absl::InvalidArgumentError("--lr must be > 0");
  if ((options.checkpoint_every > 0 || options.resume) && options.checkpoint_dir.empty()) {
    return absl::InvalidArgumentError("checkpointing and --resume need a checkpoint directory");
  }
  ASSIGN_OR_RETURN(std::unique_ptr<MlmObjective> objective,
                   MlmObjective::Create(params.layout.config(), std::move(decoder_weight),
                                        std::move(decoder_bias), std::move(stream), special,
                                        ObjectiveOptions(options)));
  ASSIGN_OR_RETURN(std::shared_ptr<const ArchTrainModel<float>> pass,
                   MakeTrainingPass(params.layout, options.device));
  std::unique_ptr<MlmPretrainer> p(
      new MlmPretrainer(std::move(params), std::move(objective), options));
  if (pass != nullptr) {
    p->model_ = std::make_unique<TrainModel<float>>(p->params_.layout, Pooling::kMean, pass);
  }
  if (options.resume) RETURN_IF_ERROR(p->LoadCheckpointState());
  return p;
}

absl::Status MlmPretrainer::Run(const std::function<void(const PretrainStepRecord&)>& on_step) {
  const int64_t last =
      options_.stop_after > 0 ? std::min(options_.stop_after, options_.steps) : options_.steps;
  while (step_ < last) {
    const auto start = std::chrono::steady_clock::now();
    std::fill(enc_grads_.begin(), enc_grads_.end(), 0.0f);
    const MlmStepLoss m =
        objective_->AccumulateStep(*model_, params_.values.data(), step_, 1.0f, 0,
                                   options_.freeze_encoder ? nullptr : enc_grads_.data());
    // Global clipping over encoder and head together.
    const double norm =
        ClipGradNorm({enc_grads_, objective_->head_weight_grads(), objective_->head_bias_grads()},
                     options_.max_grad_norm);
    const double lr = LearningRate(step_ + 1, options_.steps, options_.warmup, options_.lr);
    if (!options_.freeze_encoder) optimizer_->Step(params_.values.data(), enc_grads_.data(), lr);
    objective_->UpdateHead(lr, step_ + 1);
    ++step_;
    PretrainStepRecord rec;
    rec.step = step_;
    rec.loss = m.loss;
    rec.accuracy = m.accuracy;
    rec.lr = lr;
    rec.grad_norm = norm;
    rec.tokens = m.tokens;
    rec.masked = m.masked;
    rec.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    history_.push_back(rec);
    if (on_step) on_step(rec);
    if (options_.checkpoint_every > 0 &&
        (step_ % options_.checkpoint_every == 0 || step_ == last)) {
      RETURN_IF_ERROR(SaveCheckpointState());
    }
  }
  return absl::OkStatus();
}

PretrainStepRecord MlmPretrainer::Evaluate(uint64_t seed) {
  const auto start = std::chrono::steady_clock::now();
  const MlmStepLoss m = objective_->Evaluate(*model_, params_.values.data(), seed);
  PretrainStepRecord rec;
  rec.step = step_;
  rec.loss = m.loss;
  rec.accuracy = m.accuracy;
  rec.tokens = m.tokens;
  rec.masked = m.masked;
  rec.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return rec;
}

nlohmann::json MlmPretrainer::RunIdentity() const {
  nlohmann::json run = objective_->Identity();  // data, masking and batch shape
  run["steps"] = options_.steps;
  run["lr"] = options_.lr;
  run["warmup"] = options_.warmup;
  run["params"] = params_.values.size();
  return run;
}

absl::Status MlmPretrainer::SaveCheckpointState() const {
  const fs::path root(options_.checkpoint_dir);
  ASSIGN_OR_RETURN(const fs::path tmp, StageCheckpointDir(root));
  nlohmann::json state;
  state["format"] = kStateFormat;
  state["step"] = step_;
  state["adam_step"] = optimizer_->step();
  state["run"] = RunIdentity();
  nlohmann::json hist = nlohmann::json::array();
  for (const PretrainStepRecord& r : history_) {
    hist.push_back({r.step, r.loss, r.accuracy, r.lr, r.grad_norm, r.tokens, r.masked, r.seconds});
  }
  state["history"] = std::move(hist);
  RETURN_IF_ERROR(WriteCheckpointState(tmp, state.dump(1)));
  const std::pair<const char*, const std::vector<float>*> files[] = {
      {"params.bin", &params_.values},
      {"adam_m.bin", &optimizer_->m()},
      {"adam_v.bin", &optimizer_->v()}};
  for (const auto& [name, values] : files) {
    RETURN_IF_ERROR(WriteFloatFile((tmp / name).string(), *values));
  }
  RETURN_IF_ERROR(objective_->SaveState(tmp));
  return InstallCheckpointDir(root);
}

absl::Status MlmPretrainer::LoadCheckpointState() {
  fs::path dir;
  ASSIGN_OR_RETURN(const nlohmann::json state, ReadCheckpointState(options_.checkpoint_dir, &dir));
  try {
    if (state.at("format") != kStateFormat) {
      return absl::InvalidArgumentError(
          absl::StrCat((dir / "state.json").string(), " is not an MLM pre-training checkpoint"));
    }
    const nlohmann::json& run = state.at("run");
    const bool same = run == RunIdentity();
    if (!same) {
      return absl::InvalidArgumentError(absl::StrCat("--resume: the checkpoint in ", dir.string(),
                                                     " was saved with other options or data (",
                                                     run.dump(), "); resume needs the same ones"));
    }
    step_ = state.at("step").get<int64_t>();
    optimizer_->set_step(state.at("adam_step").get<int64_t>());
    history_.clear();
    for (const auto& h : state.at("history")) {
      PretrainStepRecord r;
      r.step = h.at(0);
      r.loss = h.at(1);
      r.accuracy = h.at(2);
      r.lr = h.at(3);
      r.grad_norm = h.at(4);
      r.tokens = h.at(5);
      r.masked = h.at(6);
      r.seconds = h.at(7);
      history_.push_back(r);
    }
  } catch (const nlohmann::json::exception& e) {
    return absl::InvalidArgumentError(
        absl::StrCat((dir / "state.json").string(), ": malformed checkpoint state: ", e.what()));
  }
  const std::pair<const char*, std::vector<float>*> files[] = {{"params.bin", &params_.values},
                                                               {"adam_m.bin", &optimizer_->m()},
                                                               {"adam_v.bin", &optimizer_->v()}};
  for (const auto& [name, values] : files) {
    ASSIGN_OR_RETURN(std::vector<float> loaded,
                     ReadFloatFile((dir / name).string(), static_cast<int64_t>(values->size())));
    *values = std::move(loaded);
  }
  return objective_->LoadState(dir);
}

}  // namespace neodb::encoder::train
