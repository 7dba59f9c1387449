#include "encoder/train/mlm_pretrainer.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <string>

#include "absl/strings/str_cat.h"
#include "encoder/train/checkpoint_dir.h"
#include "encoder/train/float_file.h"
#include "nlohmann/json.hpp"

namespace neodb::encoder::train {
namespace {

namespace fs = std::filesystem;
constexpr char kStateFormat[] = "neodb-mlm-pretrain-1";

uint64_t Mix(uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

// Plain AdamW step over a flat array (the MLM head is not part of the
// encoder's ParamLayout, so it cannot use AdamW).
void HeadAdamW(float* p, const float* g, float* m, float* v, int64_t n, const AdamWOptions& o,
               double lr, int64_t t, bool decay) {
  const double c1 = 1.0 - std::pow(o.beta1, static_cast<double>(t));
  const double c2 = 1.0 - std::pow(o.beta2, static_cast<double>(t));
  const float shrink = decay ? static_cast<float>(1.0 - lr * o.weight_decay) : 1.0f;
  for (int64_t i = 0; i < n; ++i) {
    m[i] = static_cast<float>(o.beta1 * m[i] + (1 - o.beta1) * g[i]);
    v[i] = static_cast<float>(o.beta2 * v[i] + (1 - o.beta2) * g[i] * g[i]);
    const double update = (m[i] / c1) / (std::sqrt(v[i] / c2) + o.epsilon);
    p[i] = static_cast<float>(p[i] * shrink - lr * update);
  }
}

double SumSquares(const std::vector<float>& g) {
  double s = 0;
  for (float x : g) s += static_cast<double>(x) * x;
  return s;
}

}  // namespace

absl::StatusOr<std::vector<int32_t>> TokenizeCorpus(const std::string& path,
                                                    const Tokenizer& tokenizer) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return absl::NotFoundError(absl::StrCat("cannot open corpus ", path));
  std::vector<int32_t> stream;
  std::string line;
  int64_t n = 0;
  while (std::getline(in, line)) {
    ++n;
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    auto ids = tokenizer.Tokenize(line);
    if (!ids.ok()) {
      return absl::InvalidArgumentError(
          absl::StrCat(path, ":", n, ": ", std::string(ids.status().message())));
    }
    stream.insert(stream.end(), ids->begin(), ids->end());
  }
  if (in.bad()) return absl::DataLossError(absl::StrCat("error reading corpus ", path));
  return stream;
}

MlmPretrainer::MlmPretrainer(TrainParams<float> params, std::vector<float> decoder_weight,
                             std::vector<float> decoder_bias, std::vector<int32_t> stream,
                             const SpecialTokens& special, const PretrainOptions& options)
    : params_(std::move(params)),
      head_w_(std::move(decoder_weight)),
      head_b_(std::move(decoder_bias)),
      stream_(std::move(stream)),
      special_(special),
      options_(options) {
  mask_.rate = options_.mask_rate;
  mask_.mask_id = special_.mask;
  mask_.special_ids = {special_.pad, special_.unk, special_.cls, special_.sep, special_.mask};
  model_ = std::make_unique<TrainModel<float>>(params_.layout);
  optimizer_ = std::make_unique<AdamW>(params_.layout, 0, options_.adamw);
  head_m_w_.assign(head_w_.size(), 0.0f);
  head_v_w_.assign(head_w_.size(), 0.0f);
  head_m_b_.assign(head_b_.size(), 0.0f);
  head_v_b_.assign(head_b_.size(), 0.0f);
  enc_grads_.assign(params_.values.size(), 0.0f);
  head_gw_.assign(head_w_.size(), 0.0f);
  head_gb_.assign(head_b_.size(), 0.0f);
  const int64_t total = static_cast<int64_t>(stream_.size()) / (options_.seq_len - 2);
  held_out_chunks_ = std::min<int64_t>(256, total / 100);
  num_chunks_ = total - held_out_chunks_;
  if (options_.warmup <= 0) options_.warmup = std::max<int64_t>(1, options_.steps / 20);
}

absl::StatusOr<std::unique_ptr<MlmPretrainer>> MlmPretrainer::Create(
    TrainParams<float> params, std::vector<float> decoder_weight, std::vector<float> decoder_bias,
    std::vector<int32_t> stream, const SpecialTokens& special, const PretrainOptions& options) {
  const NeoBertConfig& config = params.layout.config();
  const int64_t v = config.vocab_size, c = config.hidden_size;
  if (static_cast<int64_t>(decoder_weight.size()) != v * c ||
      static_cast<int64_t>(decoder_bias.size()) != v) {
    return absl::InvalidArgumentError(absl::StrCat("MLM head must be [", v, ", ", c, "] + [", v,
                                                   "]; got ", decoder_weight.size(), " + ",
                                                   decoder_bias.size(), " values"));
  }
  if (options.steps <= 0) return absl::InvalidArgumentError("--steps must be positive");
  if (options.seq_len < 8 || options.seq_len > config.max_length) {
    return absl::InvalidArgumentError(
        absl::StrCat("--seq-len must be in [8, ", config.max_length, "] (the model's max_length)"));
  }
  if (options.batch_tokens < options.seq_len || options.batch_tokens % options.seq_len != 0) {
    return absl::InvalidArgumentError(absl::StrCat("--batch-tokens (", options.batch_tokens,
                                                   ") must be a positive multiple of --seq-len (",
                                                   options.seq_len, ")"));
  }
  if (options.micro_batch_tokens < options.seq_len) {
    return absl::InvalidArgumentError("micro-batch tokens must be at least --seq-len");
  }
  if (!(options.lr > 0) || !(options.mask_rate > 0 && options.mask_rate < 1)) {
    return absl::InvalidArgumentError("--lr must be > 0 and the mask rate in (0, 1)");
  }
  for (int32_t id : stream) {
    if (id < 0 || id >= v) {
      return absl::InvalidArgumentError(
          absl::StrCat("corpus token id ", id, " outside the model's vocabulary (", v, ")"));
    }
  }
  if ((options.checkpoint_every > 0 || options.resume) && options.checkpoint_dir.empty()) {
    return absl::InvalidArgumentError("checkpointing and --resume need a checkpoint directory");
  }
  std::unique_ptr<MlmPretrainer> p(new MlmPretrainer(std::move(params), std::move(decoder_weight),
                                                     std::move(decoder_bias), std::move(stream),
                                                     special, options));
  const int64_t per_step = options.batch_tokens / options.seq_len;
  if (p->num_chunks_ < per_step) {
    return absl::InvalidArgumentError(absl::StrCat("corpus too small: ", p->num_chunks_,
                                                   " training sequences of ", options.seq_len,
                                                   " tokens, a step needs ", per_step));
  }
  if (options.resume) RETURN_IF_ERROR(p->LoadCheckpointState());
  return p;
}

std::vector<int64_t> MlmPretrainer::EpochOrder(int64_t epoch) const {
  std::vector<int64_t> order(static_cast<size_t>(num_chunks_));
  for (int64_t i = 0; i < num_chunks_; ++i) order[i] = i;
  // Fisher–Yates with a portable generator (std::shuffle differs by library).
  uint64_t state = Mix(options_.seed * 0x100000001b3ULL + static_cast<uint64_t>(epoch));
  for (int64_t i = num_chunks_ - 1; i > 0; --i) {
    state = Mix(state);
    const int64_t j = static_cast<int64_t>(state % static_cast<uint64_t>(i + 1));
    std::swap(order[i], order[j]);
  }
  return order;
}

PackedBatch MlmPretrainer::SequencesFromChunks(const std::vector<int64_t>& chunks) const {
  const int64_t body = options_.seq_len - 2;
  PackedBatch batch;
  for (int64_t chunk : chunks) {
    std::vector<int32_t> seq;
    seq.reserve(static_cast<size_t>(options_.seq_len));
    seq.push_back(special_.cls);
    seq.insert(seq.end(), stream_.begin() + chunk * body, stream_.begin() + (chunk + 1) * body);
    seq.push_back(special_.sep);
    AppendSequence(&batch, seq);
  }
  return batch;
}

PackedBatch MlmPretrainer::BatchForStep(int64_t step) const {
  const int64_t per_step = options_.batch_tokens / options_.seq_len;
  const int64_t per_epoch = num_chunks_ / per_step;
  const int64_t epoch = step / per_epoch;
  const int64_t first = (step % per_epoch) * per_step;
  const std::vector<int64_t> order = EpochOrder(epoch);
  return SequencesFromChunks(
      std::vector<int64_t>(order.begin() + first, order.begin() + first + per_step));
}

MlmLossResult MlmPretrainer::MicroStep(const PackedBatch& batch, uint64_t mask_seed,
                                       bool with_grads, float grad_scale) {
  const NeoBertConfig& config = params_.layout.config();
  const int64_t c = config.hidden_size;
  MaskedTokens masked = MaskTokens(batch.ids, mask_, mask_seed);
  PackedBatch input = batch;
  input.ids = masked.input_ids;
  const int64_t rows = input.total_tokens();
  std::vector<float> hidden(static_cast<size_t>(rows * c));
  TrainModel<float>::Activations acts;
  const bool encoder_grads = with_grads && !options_.freeze_encoder;
  model_->Forward(params_.values.data(), input, 0, nullptr, Pooling::kMean, nullptr,
                  encoder_grads ? &acts : nullptr, -1, nullptr, hidden.data());
  const MlmHeadView<float> head{head_w_.data(), head_b_.data(), config.vocab_size, c};
  if (!with_grads) {
    return MlmHeadLoss<float>(head, hidden.data(), rows, masked.rows, masked.labels, nullptr,
                              nullptr, nullptr);
  }
  std::vector<float> d_hidden(hidden.size(), 0.0f);
  const MlmLossResult r =
      MlmHeadLoss<float>(head, hidden.data(), rows, masked.rows, masked.labels, d_hidden.data(),
                         head_gw_.data(), head_gb_.data(), grad_scale);
  if (encoder_grads) {
    model_->BackwardFromHidden(params_.values.data(), input, acts, d_hidden.data(), 0,
                               enc_grads_.data());
  }
  return r;
}

absl::Status MlmPretrainer::Run(const std::function<void(const PretrainStepRecord&)>& on_step) {
  const int64_t last =
      options_.stop_after > 0 ? std::min(options_.stop_after, options_.steps) : options_.steps;
  const int64_t per_micro = std::max<int64_t>(1, options_.micro_batch_tokens / options_.seq_len);
  while (step_ < last) {
    const auto start = std::chrono::steady_clock::now();
    const PackedBatch batch = BatchForStep(step_);
    std::fill(enc_grads_.begin(), enc_grads_.end(), 0.0f);
    std::fill(head_gw_.begin(), head_gw_.end(), 0.0f);
    std::fill(head_gb_.begin(), head_gb_.end(), 0.0f);
    // Split into micro-batches; each is masked with its own seed, and its
    // gradient weighted by its share of the step's masked tokens. The shares
    // are known only after masking, so mask first, then run.
    struct Micro {
      PackedBatch batch;
      uint64_t seed;
      int64_t masked;
    };
    std::vector<Micro> micros;
    int64_t total_masked = 0;
    for (int64_t b = 0; b < batch.batch_size(); b += per_micro) {
      Micro m;
      for (int64_t k = b; k < std::min(b + per_micro, batch.batch_size()); ++k) {
        AppendSequence(&m.batch, std::vector<int32_t>(batch.ids.begin() + batch.offsets[k],
                                                      batch.ids.begin() + batch.offsets[k + 1]));
      }
      m.seed = Mix(options_.seed ^ Mix(static_cast<uint64_t>(step_) * 4096 + b));
      m.masked = static_cast<int64_t>(MaskTokens(m.batch.ids, mask_, m.seed).rows.size());
      total_masked += m.masked;
      micros.push_back(std::move(m));
    }
    double loss_sum = 0;
    int64_t correct = 0;
    for (const Micro& m : micros) {
      if (m.masked == 0) continue;
      const float share = static_cast<float>(m.masked) / static_cast<float>(total_masked);
      const MlmLossResult r = MicroStep(m.batch, m.seed, true, share);
      loss_sum += r.loss * static_cast<double>(r.masked);
      correct += r.correct;
    }
    // Global clipping over encoder and head together.
    const double norm =
        std::sqrt(SumSquares(enc_grads_) + SumSquares(head_gw_) + SumSquares(head_gb_));
    if (norm > options_.max_grad_norm && norm > 0) {
      const float scale = static_cast<float>(options_.max_grad_norm / norm);
      for (float& g : enc_grads_) g *= scale;
      for (float& g : head_gw_) g *= scale;
      for (float& g : head_gb_) g *= scale;
    }
    const double lr = LearningRate(step_ + 1, options_.steps, options_.warmup, options_.lr);
    if (!options_.freeze_encoder) optimizer_->Step(params_.values.data(), enc_grads_.data(), lr);
    HeadAdamW(head_w_.data(), head_gw_.data(), head_m_w_.data(), head_v_w_.data(),
              static_cast<int64_t>(head_w_.size()), options_.adamw, lr, step_ + 1, true);
    HeadAdamW(head_b_.data(), head_gb_.data(), head_m_b_.data(), head_v_b_.data(),
              static_cast<int64_t>(head_b_.size()), options_.adamw, lr, step_ + 1, false);
    ++step_;
    PretrainStepRecord rec;
    rec.step = step_;
    rec.loss = total_masked > 0 ? loss_sum / static_cast<double>(total_masked) : 0.0;
    rec.accuracy = total_masked > 0 ? static_cast<double>(correct) / total_masked : 0.0;
    rec.lr = lr;
    rec.grad_norm = norm;
    rec.tokens = batch.total_tokens();
    rec.masked = total_masked;
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
  PretrainStepRecord rec;
  const int64_t per_micro = std::max<int64_t>(1, options_.micro_batch_tokens / options_.seq_len);
  double loss_sum = 0;
  int64_t correct = 0, masked = 0;
  const auto start = std::chrono::steady_clock::now();
  for (int64_t b = 0; b < held_out_chunks_; b += per_micro) {
    std::vector<int64_t> chunks;
    for (int64_t k = b; k < std::min(b + per_micro, held_out_chunks_); ++k) {
      chunks.push_back(num_chunks_ + k);
    }
    const PackedBatch batch = SequencesFromChunks(chunks);
    const MlmLossResult r = MicroStep(batch, Mix(seed + static_cast<uint64_t>(b)), false, 1.0f);
    loss_sum += r.loss * static_cast<double>(r.masked);
    correct += r.correct;
    masked += r.masked;
    rec.tokens += batch.total_tokens();
  }
  rec.step = step_;
  rec.masked = masked;
  rec.loss = masked > 0 ? loss_sum / static_cast<double>(masked) : 0.0;
  rec.accuracy = masked > 0 ? static_cast<double>(correct) / static_cast<double>(masked) : 0.0;
  rec.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return rec;
}

absl::Status MlmPretrainer::SaveCheckpointState() const {
  const fs::path root(options_.checkpoint_dir);
  ASSIGN_OR_RETURN(const fs::path tmp, StageCheckpointDir(root));
  nlohmann::json state;
  state["format"] = kStateFormat;
  state["step"] = step_;
  state["adam_step"] = optimizer_->step();
  // The options that must match for an exact continuation.
  state["run"] = {{"seed", options_.seed},
                  {"steps", options_.steps},
                  {"batch_tokens", options_.batch_tokens},
                  {"seq_len", options_.seq_len},
                  {"micro_batch_tokens", options_.micro_batch_tokens},
                  {"lr", options_.lr},
                  {"warmup", options_.warmup},
                  {"mask_rate", options_.mask_rate},
                  {"stream_tokens", stream_.size()},
                  {"params", params_.values.size()}};
  nlohmann::json hist = nlohmann::json::array();
  for (const PretrainStepRecord& r : history_) {
    hist.push_back({r.step, r.loss, r.accuracy, r.lr, r.grad_norm, r.tokens, r.masked, r.seconds});
  }
  state["history"] = std::move(hist);
  RETURN_IF_ERROR(WriteCheckpointState(tmp, state.dump(1)));
  const std::pair<const char*, const std::vector<float>*> files[] = {
      {"params.bin", &params_.values},  {"adam_m.bin", &optimizer_->m()},
      {"adam_v.bin", &optimizer_->v()}, {"head_w.bin", &head_w_},
      {"head_b.bin", &head_b_},         {"head_m_w.bin", &head_m_w_},
      {"head_v_w.bin", &head_v_w_},     {"head_m_b.bin", &head_m_b_},
      {"head_v_b.bin", &head_v_b_}};
  for (const auto& [name, values] : files) {
    RETURN_IF_ERROR(WriteFloatFile((tmp / name).string(), *values));
  }
  return InstallCheckpointDir(root);
}

absl::Status MlmPretrainer::LoadCheckpointState() {
  const fs::path root(options_.checkpoint_dir);
  const fs::path dir = FindCheckpointDir(root);
  std::ifstream in(dir / "state.json");
  if (!in) return absl::NotFoundError(absl::StrCat("--resume: no checkpoint in ", root.string()));
  nlohmann::json state;
  try {
    state = nlohmann::json::parse(in);
    if (state.at("format") != kStateFormat) {
      return absl::InvalidArgumentError(
          absl::StrCat((dir / "state.json").string(), " is not an MLM pre-training checkpoint"));
    }
    const nlohmann::json& run = state.at("run");
    const bool same =
        run.at("seed") == options_.seed && run.at("steps") == options_.steps &&
        run.at("batch_tokens") == options_.batch_tokens && run.at("seq_len") == options_.seq_len &&
        run.at("micro_batch_tokens") == options_.micro_batch_tokens &&
        run.at("lr") == options_.lr && run.at("warmup") == options_.warmup &&
        run.at("mask_rate") == options_.mask_rate && run.at("stream_tokens") == stream_.size() &&
        run.at("params") == params_.values.size();
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
  const std::pair<const char*, std::vector<float>*> files[] = {
      {"params.bin", &params_.values},  {"adam_m.bin", &optimizer_->m()},
      {"adam_v.bin", &optimizer_->v()}, {"head_w.bin", &head_w_},
      {"head_b.bin", &head_b_},         {"head_m_w.bin", &head_m_w_},
      {"head_v_w.bin", &head_v_w_},     {"head_m_b.bin", &head_m_b_},
      {"head_v_b.bin", &head_v_b_}};
  for (const auto& [name, values] : files) {
    ASSIGN_OR_RETURN(std::vector<float> loaded,
                     ReadFloatFile((dir / name).string(), static_cast<int64_t>(values->size())));
    *values = std::move(loaded);
  }
  return absl::OkStatus();
}

}  // namespace neodb::encoder::train
