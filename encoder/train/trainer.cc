#include "encoder/train/trainer.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <numeric>
#include <sstream>

#include "absl/strings/str_cat.h"
#include "common/env.h"
#include "encoder/train/checkpoint_dir.h"
#include "encoder/train/float_file.h"
#include "nlohmann/json.hpp"

namespace neodb::encoder::train {
namespace {

namespace fs = std::filesystem;
constexpr char kStateFormat[] = "neodb-train-state-1";

// The permutation of pair indices used in `epoch`.
std::vector<int64_t> EpochOrder(int64_t n, uint64_t seed, int64_t epoch) {
  std::vector<int64_t> order(static_cast<size_t>(n));
  std::iota(order.begin(), order.end(), 0);
  SplitMix64 rng(seed * 0x9e3779b97f4a7c15ULL + static_cast<uint64_t>(epoch) + 1);
  for (int64_t i = n - 1; i > 0; --i) {
    const int64_t j = static_cast<int64_t>(rng.Next() % static_cast<uint64_t>(i + 1));
    std::swap(order[i], order[j]);
  }
  return order;
}

// `count` distinct positions of [0, pool), drawn for pair `pair` at `step`
// (partial Fisher-Yates on a generator seeded by all three: a pure function,
// so a resumed run draws the same negatives).
std::vector<int64_t> DrawNegatives(int64_t pool, int64_t count, uint64_t seed, int64_t step,
                                   int64_t pair) {
  std::vector<int64_t> idx(static_cast<size_t>(pool));
  std::iota(idx.begin(), idx.end(), 0);
  SplitMix64 rng(
      (seed + 1) * 0xd1b54a32d192ed03ULL ^
      (static_cast<uint64_t>(step) * 0x9e3779b97f4a7c15ULL + static_cast<uint64_t>(pair)));
  for (int64_t i = 0; i < count; ++i) {
    const int64_t j = i + static_cast<int64_t>(rng.Next() % static_cast<uint64_t>(pool - i));
    std::swap(idx[i], idx[j]);
  }
  idx.resize(static_cast<size_t>(count));
  return idx;
}

// The options that must match between a checkpoint and a --resume run.
nlohmann::json RunIdentity(const TrainerOptions& o, int64_t num_pairs, int64_t param_count) {
  nlohmann::json id = {{"steps", o.steps},
                       {"batch_size", o.batch_size},
                       {"lr", o.lr},
                       {"warmup", o.warmup},
                       {"temperature", o.temperature},
                       {"train_layers", o.train_layers},
                       {"seed", o.seed},
                       {"max_grad_norm", o.max_grad_norm},
                       {"weight_decay", o.adamw.weight_decay},
                       {"num_pairs", num_pairs},
                       {"param_count", param_count}};
  // Only when set, so checkpoints from before the option still resume.
  if (o.negatives_per_pair > 0) id["negatives_per_pair"] = o.negatives_per_pair;
  if (!o.keep_zero_weights) id["keep_zero_weights"] = false;
  if (o.freeze_channel) id["freeze_channel"] = true;
  // The loss leaves in-batch known positives out since this was added; a
  // checkpoint written before would continue under another loss.
  id["in_batch_known_positives"] = "excluded";
  return id;
}

}  // namespace

Trainer::Trainer(TrainParams<float> params, std::vector<TokenizedPair> data,
                 const TrainerOptions& options)
    : params_(std::move(params)),
      data_(std::move(data)),
      known_positives_(data_),
      options_(options) {}

absl::Status CheckTrainerNumbers(const TrainerOptions& options) {
  if (options.steps < 1) return absl::InvalidArgumentError("--steps must be at least 1");
  if (options.batch_size < 1) return absl::InvalidArgumentError("--batch-size must be at least 1");
  if (!(options.lr > 0 && std::isfinite(options.lr)))
    return absl::InvalidArgumentError("--lr must be a positive number");
  if (!(options.temperature > 0 && std::isfinite(options.temperature)))
    return absl::InvalidArgumentError("--temperature must be a positive number");
  if (options.chunk_size < 1) return absl::InvalidArgumentError("--chunk-size must be >= 1");
  return absl::OkStatus();
}

absl::StatusOr<std::unique_ptr<Trainer>> Trainer::Create(
    TrainParams<float> params, std::vector<TokenizedPair> data, const TrainerOptions& options,
    std::unique_ptr<MlmObjective> mlm, std::unique_ptr<DistillObjective> distill) {
  const int64_t n = static_cast<int64_t>(data.size());
  const int64_t layers = params.layout.num_layers();
  RETURN_IF_ERROR(CheckTrainerNumbers(options));
  if (n == 0 && distill == nullptr) {
    return absl::InvalidArgumentError(
        "no training pairs: give pairs, or a distillation objective to train on alone");
  }
  if (n > 0 && options.batch_size > n) {
    return absl::InvalidArgumentError(absl::StrCat("--batch-size ", options.batch_size,
                                                   " is larger than the ", n, " training pairs"));
  }
  if (options.warmup < 0) return absl::InvalidArgumentError("--warmup must be >= 0");
  if (options.train_layers < 0 || options.train_layers > layers) {
    return absl::InvalidArgumentError(absl::StrCat("--train-layers must be in [0, ", layers,
                                                   "] (0 = all), got ", options.train_layers));
  }
  if (mlm != nullptr && !(options.mlm_weight > 0 && std::isfinite(options.mlm_weight))) {
    return absl::InvalidArgumentError("--mlm-weight must be a positive number");
  }
  if (distill != nullptr &&
      !(options.distill_weight > 0 && std::isfinite(options.distill_weight))) {
    return absl::InvalidArgumentError("--distill-weight must be a positive number");
  }
  if (options.negatives_per_pair < 0) {
    return absl::InvalidArgumentError("--negatives-per-pair must be >= 0");
  }
  if (options.checkpoint_every < 0) {
    return absl::InvalidArgumentError("--checkpoint-every must be >= 0");
  }
  if ((options.checkpoint_every > 0 || options.resume) && options.checkpoint_dir.empty()) {
    return absl::InvalidArgumentError("checkpoints need a checkpoint directory");
  }
  std::unique_ptr<Trainer> t(new Trainer(std::move(params), std::move(data), options));
  t->mlm_ = std::move(mlm);
  t->distill_ = std::move(distill);
  ASSIGN_OR_RETURN(std::shared_ptr<const ArchTrainModel<float>> pass,
                   MakeTrainingPass(t->params_.layout, options.device));
  t->model_ = std::make_unique<TrainModel<float>>(t->params_.layout, options.pooling, pass);
  const int64_t begin = t->params_.layout.TrainableBegin(options.train_layers);
  t->optimizer_ = std::make_unique<AdamW>(t->params_.layout, begin, options.adamw);
  t->grads_.assign(static_cast<size_t>(t->params_.layout.total() - begin), 0.0f);
  // From the starting weights, before a resume loads the checkpoint's: a
  // resumed run freezes exactly what the original run froze.
  if (options.keep_zero_weights) {
    t->frozen_zero_weights_ = t->optimizer_->FreezeZeroMatrixEntries(t->params_.values.data());
  }
  if (options.freeze_channel) RETURN_IF_ERROR(t->FreezeChannel());
  if (options.resume) RETURN_IF_ERROR(t->LoadCheckpointState());
  return t;
}

absl::Status Trainer::FreezeChannel() {
  const std::vector<int64_t> dims = PassThroughDims(params_);
  if (dims.empty()) {
    return absl::InvalidArgumentError(
        "--freeze-channel: the model has no pass-through dims (every hidden dim is read or "
        "written by some layer), so there is no channel to freeze");
  }
  const ParamEntry& emb = params_.layout.embeddings();
  if (optimizer_->begin() >= emb.offset + emb.numel) {
    return absl::InvalidArgumentError(
        "--freeze-channel: the embeddings do not train with this --train-layers, so there is "
        "nothing to freeze");
  }
  const int64_t c = params_.layout.hidden_size();
  std::vector<uint8_t> is_channel(static_cast<size_t>(c), 0);
  for (const int64_t d : dims) is_channel[d] = 1;
  const int64_t end = emb.offset + emb.numel;
  optimizer_->FreezeWhere([&](int64_t i) {
    return i >= emb.offset && i < end && is_channel[static_cast<size_t>((i - emb.offset) % c)];
  });
  // All of the channel's entries, the zeros keep_zero_weights froze already included.
  frozen_channel_weights_ = emb.shape[0] * static_cast<int64_t>(dims.size());
  return absl::OkStatus();
}

ContrastiveBatch Trainer::BatchForStep(int64_t step) const {
  const int64_t n = static_cast<int64_t>(data_.size());
  const int64_t per_epoch = n / options_.batch_size;
  const int64_t epoch = step / per_epoch;
  const int64_t first = (step % per_epoch) * options_.batch_size;
  const std::vector<int64_t> order = EpochOrder(n, options_.seed, epoch);
  ContrastiveBatch batch;
  for (int64_t i = first; i < first + options_.batch_size; ++i) {
    const TokenizedPair& p = data_[order[i]];
    batch.queries.push_back(p.query);
    batch.positives.push_back(p.positive);
    const int64_t pool = static_cast<int64_t>(p.negatives.size());
    if (options_.negatives_per_pair == 0 || options_.negatives_per_pair >= pool) {
      for (const auto& neg : p.negatives) batch.negatives.push_back(neg);
      continue;
    }
    for (int64_t k :
         DrawNegatives(pool, options_.negatives_per_pair, options_.seed, step, order[i])) {
      batch.negatives.push_back(p.negatives[static_cast<size_t>(k)]);
    }
  }
  batch.excluded = known_positives_.Excluded(batch);
  return batch;
}

absl::Status Trainer::Run(const std::function<void(const StepRecord&)>& on_step) {
  GradCacheOptions gc;
  gc.temperature = options_.temperature;
  gc.chunk_size = options_.chunk_size;
  gc.train_layers = options_.train_layers;
  const int64_t last =
      options_.stop_after > 0 ? std::min(options_.steps, options_.stop_after) : options_.steps;
  while (step_ < last) {
    const auto start = std::chrono::steady_clock::now();
    std::fill(grads_.begin(), grads_.end(), 0.0f);
    StepRecord rec;
    rec.step = step_ + 1;
    if (!data_.empty()) {  // else distillation alone (Create checked there is one)
      const ContrastiveBatch batch = BatchForStep(step_);
      const InfoNceResult res =
          GradCacheStep(*model_, params_.values.data(), batch, gc, grads_.data());
      rec.loss = res.loss;
      rec.accuracy = res.accuracy;
      rec.known_positives = res.excluded;
      rec.tokens = batch.num_tokens();
    }
    if (distill_ != nullptr) {
      const DistillStepLoss d = distill_->AccumulateStep(
          *model_, params_.values.data(), step_, static_cast<float>(options_.distill_weight),
          optimizer_->begin(), grads_.data());
      rec.loss += options_.distill_weight * d.loss;
      rec.distill_loss = d.loss;
      rec.tokens += d.tokens;
    }
    if (mlm_ == nullptr) {
      optimizer_->ZeroFrozenGradients(grads_.data());
      rec.grad_norm = ClipGradNorm({grads_}, options_.max_grad_norm);
    } else {
      const MlmStepLoss m = mlm_->AccumulateStep(*model_, params_.values.data(), step_,
                                                 static_cast<float>(options_.mlm_weight),
                                                 optimizer_->begin(), grads_.data());
      rec.loss += options_.mlm_weight * m.loss;
      rec.mlm_loss = m.loss;
      rec.mlm_accuracy = m.accuracy;
      rec.tokens += m.tokens;
      optimizer_->ZeroFrozenGradients(grads_.data());
      // Global clipping over encoder and head together.
      rec.grad_norm = ClipGradNorm({grads_, mlm_->head_weight_grads(), mlm_->head_bias_grads()},
                                   options_.max_grad_norm);
    }
    rec.lr = LearningRate(rec.step, options_.steps, options_.warmup, options_.lr);
    if (!std::isfinite(rec.loss) || !std::isfinite(rec.grad_norm)) {
      return absl::InternalError(absl::StrCat("step ", rec.step,
                                              ": loss or gradient is not finite ", "(loss ",
                                              rec.loss, "); lower --lr"));
    }
    optimizer_->Step(params_.values.data(), grads_.data(), rec.lr);
    if (mlm_ != nullptr) mlm_->UpdateHead(rec.lr, step_ + 1);
    ++step_;
    rec.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    history_.push_back(rec);
    if (on_step) on_step(rec);
    const bool periodic = options_.checkpoint_every > 0 && step_ % options_.checkpoint_every == 0;
    const bool cancelled = options_.cancel != nullptr && options_.cancel->load();
    const bool interrupted = (step_ == last && last < options_.steps) || cancelled;
    if (!options_.checkpoint_dir.empty() && (periodic || interrupted)) {
      RETURN_IF_ERROR(SaveCheckpointState());
    }
    if (cancelled && step_ < options_.steps) {
      return absl::CancelledError(
          absl::StrCat("interrupted after step ", step_,
                       options_.checkpoint_dir.empty() ? "" : "; continue with --resume"));
    }
  }
  return absl::OkStatus();
}

absl::Status Trainer::SaveCheckpointState() const {
  const fs::path root(options_.checkpoint_dir);
  ASSIGN_OR_RETURN(const fs::path tmp, StageCheckpointDir(root));
  // At least 1: a run without pairs (distillation alone) has no contrastive epochs.
  const int64_t per_epoch =
      std::max<int64_t>(1, static_cast<int64_t>(data_.size()) / options_.batch_size);
  nlohmann::json state;
  state["format"] = kStateFormat;
  state["step"] = step_;
  state["adam_step"] = optimizer_->step();
  state["trainable_begin"] = optimizer_->begin();
  // The data order is a pure function of (seed, step): this is all the RNG
  // state there is.
  state["rng"] = {
      {"seed", options_.seed}, {"epoch", step_ / per_epoch}, {"batch_in_epoch", step_ % per_epoch}};
  state["run"] = RunIdentity(options_, static_cast<int64_t>(data_.size()), params_.layout.total());
  if (mlm_ != nullptr) {
    state["run"]["mlm"] = mlm_->Identity();
    state["run"]["mlm_weight"] = options_.mlm_weight;
  }
  if (distill_ != nullptr) {
    state["run"]["distill"] = distill_->Identity();
    state["run"]["distill_weight"] = options_.distill_weight;
  }
  nlohmann::json hist = nlohmann::json::array();
  for (const StepRecord& r : history_) {
    hist.push_back({r.step, r.loss, r.accuracy, r.lr, r.grad_norm, r.tokens, r.seconds, r.mlm_loss,
                    r.mlm_accuracy, r.distill_loss, r.known_positives});
  }
  state["history"] = std::move(hist);
  RETURN_IF_ERROR(WriteCheckpointState(tmp, state.dump(1)));
  RETURN_IF_ERROR(WriteFloatFile((tmp / "params.bin").string(), params_.values));
  RETURN_IF_ERROR(WriteFloatFile((tmp / "adam_m.bin").string(), optimizer_->m()));
  RETURN_IF_ERROR(WriteFloatFile((tmp / "adam_v.bin").string(), optimizer_->v()));
  if (mlm_ != nullptr) RETURN_IF_ERROR(mlm_->SaveState(tmp));
  // Swap in: the previous checkpoint stays valid until the new one is in place.
  return InstallCheckpointDir(root);
}

absl::Status Trainer::LoadCheckpointState() {
  fs::path dir;
  ASSIGN_OR_RETURN(const nlohmann::json state, ReadCheckpointState(options_.checkpoint_dir, &dir));
  try {
    if (state.value("format", "") != kStateFormat) {
      return absl::DataLossError(
          absl::StrCat((dir / "state.json").string(), ": not a neodb training checkpoint"));
    }
    nlohmann::json want =
        RunIdentity(options_, static_cast<int64_t>(data_.size()), params_.layout.total());
    // A run with an auxiliary MLM resumes only a checkpoint made with the
    // same one, and a run without only one made without.
    want["mlm"] = mlm_ != nullptr ? mlm_->Identity() : nlohmann::json();
    want["mlm_weight"] = mlm_ != nullptr ? nlohmann::json(options_.mlm_weight) : nlohmann::json();
    want["distill"] = distill_ != nullptr ? distill_->Identity() : nlohmann::json();
    want["distill_weight"] =
        distill_ != nullptr ? nlohmann::json(options_.distill_weight) : nlohmann::json();
    // (A key the checkpoint lacks reads as null: older checkpoints have no "mlm".)
    const nlohmann::json& run = state.at("run");
    for (auto it = want.begin(); it != want.end(); ++it) {
      if (run.value(it.key(), nlohmann::json()) != it.value()) {
        return absl::FailedPreconditionError(absl::StrCat(
            "--resume: ", it.key(), " is ", it.value().dump(), " but the checkpoint was made with ",
            run.value(it.key(), nlohmann::json()).dump(),
            "; resume with the same settings (or start a fresh run)"));
      }
    }
    if (state.at("trainable_begin").get<int64_t>() != optimizer_->begin()) {
      return absl::DataLossError("checkpoint: trainable range does not match");
    }
    ASSIGN_OR_RETURN(std::vector<float> values,
                     ReadFloatFile((dir / "params.bin").string(), params_.layout.total()));
    ASSIGN_OR_RETURN(std::vector<float> m,
                     ReadFloatFile((dir / "adam_m.bin").string(), optimizer_->size()));
    ASSIGN_OR_RETURN(std::vector<float> v,
                     ReadFloatFile((dir / "adam_v.bin").string(), optimizer_->size()));
    std::vector<StepRecord> history;
    for (const auto& r : state.at("history")) {
      StepRecord rec;
      rec.step = r.at(0).get<int64_t>();
      rec.loss = r.at(1).get<double>();
      rec.accuracy = r.at(2).get<double>();
      rec.lr = r.at(3).get<double>();
      rec.grad_norm = r.at(4).get<double>();
      rec.tokens = r.at(5).get<int64_t>();
      rec.seconds = r.at(6).get<double>();
      if (r.size() >= 9) {
        rec.mlm_loss = r.at(7).get<double>();
        rec.mlm_accuracy = r.at(8).get<double>();
      }
      if (r.size() >= 10) rec.distill_loss = r.at(9).get<double>();
      if (r.size() >= 11) rec.known_positives = r.at(10).get<int64_t>();
      history.push_back(rec);
    }
    const int64_t step = state.at("step").get<int64_t>();
    if (step < 0 || step > options_.steps || static_cast<int64_t>(history.size()) != step) {
      return absl::DataLossError("checkpoint: inconsistent step count");
    }
    params_.values = std::move(values);
    optimizer_->m() = std::move(m);
    optimizer_->v() = std::move(v);
    optimizer_->set_step(state.at("adam_step").get<int64_t>());
    if (mlm_ != nullptr) RETURN_IF_ERROR(mlm_->LoadState(dir));
    history_ = std::move(history);
    step_ = step;
  } catch (const nlohmann::json::exception& e) {
    return absl::DataLossError(absl::StrCat((dir / "state.json").string(), ": ", e.what()));
  }
  return absl::OkStatus();
}

}  // namespace neodb::encoder::train
