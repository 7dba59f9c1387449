#include "encoder/train/mlm_objective.h"

#include <algorithm>
#include <cmath>
#include <string>

#include "absl/strings/str_cat.h"
#include "common/line_reader.h"
#include "common/status_macros.h"
#include "encoder/train/float_file.h"

namespace neodb::encoder::train {
namespace {

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

}  // namespace

absl::StatusOr<std::vector<int32_t>> TokenizeCorpus(const std::string& path,
                                                    const Tokenizer& tokenizer, Env* env) {
  absl::StatusOr<LineReader> in = LineReader::Open(env, path);
  if (absl::IsNotFound(in.status())) {
    return absl::NotFoundError(absl::StrCat("cannot open corpus ", path));
  }
  RETURN_IF_ERROR(in.status());
  std::vector<int32_t> stream;
  std::string line;
  int64_t n = 0;
  for (;;) {
    absl::StatusOr<bool> more = in->ReadLine(&line);
    if (!more.ok()) {
      return absl::DataLossError(absl::StrCat("error reading corpus ", path, ": ",
                                              more.status().message()));
    }
    if (!*more) break;
    ++n;
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    auto ids = tokenizer.Tokenize(line);
    if (!ids.ok()) {
      return absl::InvalidArgumentError(
          absl::StrCat(path, ":", n, ": ", std::string(ids.status().message())));
    }
    stream.insert(stream.end(), ids->begin(), ids->end());
  }
  return stream;
}

MlmObjective::MlmObjective(std::vector<float> decoder_weight, std::vector<float> decoder_bias,
                           std::vector<int32_t> stream, const SpecialTokens& special,
                           const MlmObjectiveOptions& options, int64_t vocab, int64_t hidden)
    : head_w_(std::move(decoder_weight)),
      head_b_(std::move(decoder_bias)),
      stream_(std::move(stream)),
      special_(special),
      options_(options),
      vocab_(vocab),
      hidden_(hidden) {
  mask_.rate = options_.mask_rate;
  mask_.mask_id = special_.mask;
  mask_.special_ids = {special_.pad, special_.unk, special_.cls, special_.sep, special_.mask};
  head_gw_.assign(head_w_.size(), 0.0f);
  head_gb_.assign(head_b_.size(), 0.0f);
  head_m_w_.assign(head_w_.size(), 0.0f);
  head_v_w_.assign(head_w_.size(), 0.0f);
  head_m_b_.assign(head_b_.size(), 0.0f);
  head_v_b_.assign(head_b_.size(), 0.0f);
  const int64_t total = static_cast<int64_t>(stream_.size()) / (options_.seq_len - 2);
  held_out_chunks_ = std::min<int64_t>(256, total / 100);
  num_chunks_ = total - held_out_chunks_;
}

absl::StatusOr<std::unique_ptr<MlmObjective>> MlmObjective::Create(
    const NeoBertConfig& config, std::vector<float> decoder_weight, std::vector<float> decoder_bias,
    std::vector<int32_t> stream, const SpecialTokens& special, const MlmObjectiveOptions& options) {
  const int64_t v = config.vocab_size, c = config.hidden_size;
  if (static_cast<int64_t>(decoder_weight.size()) != v * c ||
      static_cast<int64_t>(decoder_bias.size()) != v) {
    return absl::InvalidArgumentError(absl::StrCat("MLM head must be [", v, ", ", c, "] + [", v,
                                                   "]; got ", decoder_weight.size(), " + ",
                                                   decoder_bias.size(), " values"));
  }
  if (options.seq_len < 8 || options.seq_len > config.max_length) {
    return absl::InvalidArgumentError(
        absl::StrCat("the MLM sequence length must be in [8, ", config.max_length,
                     "] (the model's max_length), got ", options.seq_len));
  }
  if (options.batch_tokens < options.seq_len || options.batch_tokens % options.seq_len != 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "MLM tokens per step (", options.batch_tokens,
        ") must be a positive multiple of the sequence length (", options.seq_len, ")"));
  }
  if (options.micro_batch_tokens < options.seq_len) {
    return absl::InvalidArgumentError("micro-batch tokens must be at least the sequence length");
  }
  if (!(options.mask_rate > 0 && options.mask_rate < 1)) {
    return absl::InvalidArgumentError("the mask rate must be in (0, 1)");
  }
  for (int32_t id : stream) {
    if (id < 0 || id >= v) {
      return absl::InvalidArgumentError(
          absl::StrCat("corpus token id ", id, " outside the model's vocabulary (", v, ")"));
    }
  }
  std::unique_ptr<MlmObjective> o(new MlmObjective(std::move(decoder_weight),
                                                   std::move(decoder_bias), std::move(stream),
                                                   special, options, v, c));
  const int64_t per_step = options.batch_tokens / options.seq_len;
  if (o->num_chunks_ < per_step) {
    return absl::InvalidArgumentError(absl::StrCat("corpus too small: ", o->num_chunks_,
                                                   " training sequences of ", options.seq_len,
                                                   " tokens, a step needs ", per_step));
  }
  return o;
}

std::vector<int64_t> MlmObjective::EpochOrder(int64_t epoch) const {
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

PackedBatch MlmObjective::SequencesFromChunks(const std::vector<int64_t>& chunks) const {
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

PackedBatch MlmObjective::BatchForStep(int64_t step) const {
  const int64_t per_step = options_.batch_tokens / options_.seq_len;
  const int64_t per_epoch = num_chunks_ / per_step;
  const int64_t epoch = step / per_epoch;
  const int64_t first = (step % per_epoch) * per_step;
  const std::vector<int64_t> order = EpochOrder(epoch);
  return SequencesFromChunks(
      std::vector<int64_t>(order.begin() + first, order.begin() + first + per_step));
}

MlmLossResult MlmObjective::MicroStep(const TrainModel<float>& model, const float* params,
                                      const PackedBatch& batch, uint64_t mask_seed,
                                      float grad_scale, int64_t grad_begin, float* enc_grads,
                                      float* head_gw, float* head_gb) const {
  const int64_t c = hidden_;
  MaskedTokens masked = MaskTokens(batch.ids, mask_, mask_seed);
  PackedBatch input = batch;
  input.ids = masked.input_ids;
  const int64_t rows = input.total_tokens();
  std::vector<float> hidden(static_cast<size_t>(rows * c));
  TrainModel<float>::Activations acts;
  model.Forward(params, input, 0, nullptr, Pooling::kMean, nullptr,
                enc_grads != nullptr ? &acts : nullptr, -1, nullptr, hidden.data());
  const MlmHeadView<float> head{head_w_.data(), head_b_.data(), vocab_, c};
  if (head_gw == nullptr) {
    return MlmHeadLoss<float>(head, hidden.data(), rows, masked.rows, masked.labels, nullptr,
                              nullptr, nullptr);
  }
  std::vector<float> d_hidden(enc_grads != nullptr ? hidden.size() : 0, 0.0f);
  const MlmLossResult r = MlmHeadLoss<float>(head, hidden.data(), rows, masked.rows, masked.labels,
                                             enc_grads != nullptr ? d_hidden.data() : nullptr,
                                             head_gw, head_gb, grad_scale);
  if (enc_grads != nullptr) {
    model.BackwardFromHidden(params, input, acts, d_hidden.data(), grad_begin, enc_grads);
  }
  return r;
}

MlmStepLoss MlmObjective::AccumulateStep(const TrainModel<float>& model, const float* params,
                                         int64_t step, float grad_scale, int64_t grad_begin,
                                         float* enc_grads) {
  const int64_t per_micro = std::max<int64_t>(1, options_.micro_batch_tokens / options_.seq_len);
  const PackedBatch batch = BatchForStep(step);
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
    m.seed = Mix(options_.seed ^ Mix(static_cast<uint64_t>(step) * 4096 + b));
    m.masked = static_cast<int64_t>(MaskTokens(m.batch.ids, mask_, m.seed).rows.size());
    total_masked += m.masked;
    micros.push_back(std::move(m));
  }
  double loss_sum = 0;
  int64_t correct = 0;
  for (const Micro& m : micros) {
    if (m.masked == 0) continue;
    const float share = static_cast<float>(m.masked) / static_cast<float>(total_masked);
    const MlmLossResult r = MicroStep(model, params, m.batch, m.seed, share * grad_scale,
                                      grad_begin, enc_grads, head_gw_.data(), head_gb_.data());
    loss_sum += r.loss * static_cast<double>(r.masked);
    correct += r.correct;
  }
  MlmStepLoss out;
  out.loss = total_masked > 0 ? loss_sum / static_cast<double>(total_masked) : 0.0;
  out.accuracy = total_masked > 0 ? static_cast<double>(correct) / total_masked : 0.0;
  out.tokens = batch.total_tokens();
  out.masked = total_masked;
  return out;
}

void MlmObjective::UpdateHead(double lr, int64_t t) {
  HeadAdamW(head_w_.data(), head_gw_.data(), head_m_w_.data(), head_v_w_.data(),
            static_cast<int64_t>(head_w_.size()), options_.adamw, lr, t, true);
  HeadAdamW(head_b_.data(), head_gb_.data(), head_m_b_.data(), head_v_b_.data(),
            static_cast<int64_t>(head_b_.size()), options_.adamw, lr, t, false);
}

MlmStepLoss MlmObjective::Evaluate(const TrainModel<float>& model, const float* params,
                                   uint64_t seed) const {
  MlmStepLoss out;
  const int64_t per_micro = std::max<int64_t>(1, options_.micro_batch_tokens / options_.seq_len);
  double loss_sum = 0;
  int64_t correct = 0;
  for (int64_t b = 0; b < held_out_chunks_; b += per_micro) {
    std::vector<int64_t> chunks;
    for (int64_t k = b; k < std::min(b + per_micro, held_out_chunks_); ++k) {
      chunks.push_back(num_chunks_ + k);
    }
    const PackedBatch batch = SequencesFromChunks(chunks);
    const MlmLossResult r = MicroStep(model, params, batch, Mix(seed + static_cast<uint64_t>(b)),
                                      1.0f, 0, nullptr, nullptr, nullptr);
    loss_sum += r.loss * static_cast<double>(r.masked);
    correct += r.correct;
    out.masked += r.masked;
    out.tokens += batch.total_tokens();
  }
  out.loss = out.masked > 0 ? loss_sum / static_cast<double>(out.masked) : 0.0;
  out.accuracy =
      out.masked > 0 ? static_cast<double>(correct) / static_cast<double>(out.masked) : 0.0;
  return out;
}

nlohmann::json MlmObjective::Identity() const {
  return {{"seed", options_.seed},           {"batch_tokens", options_.batch_tokens},
          {"seq_len", options_.seq_len},     {"micro_batch_tokens", options_.micro_batch_tokens},
          {"mask_rate", options_.mask_rate}, {"stream_tokens", stream_.size()}};
}

absl::Status MlmObjective::SaveState(const std::filesystem::path& dir) const {
  const std::pair<const char*, const std::vector<float>*> files[] = {
      {"head_w.bin", &head_w_},     {"head_b.bin", &head_b_},     {"head_m_w.bin", &head_m_w_},
      {"head_v_w.bin", &head_v_w_}, {"head_m_b.bin", &head_m_b_}, {"head_v_b.bin", &head_v_b_}};
  for (const auto& [name, values] : files) {
    RETURN_IF_ERROR(WriteFloatFile((dir / name).string(), *values));
  }
  return absl::OkStatus();
}

absl::Status MlmObjective::LoadState(const std::filesystem::path& dir) {
  const std::pair<const char*, std::vector<float>*> files[] = {
      {"head_w.bin", &head_w_},     {"head_b.bin", &head_b_},     {"head_m_w.bin", &head_m_w_},
      {"head_v_w.bin", &head_v_w_}, {"head_m_b.bin", &head_m_b_}, {"head_v_b.bin", &head_v_b_}};
  for (const auto& [name, values] : files) {
    ASSIGN_OR_RETURN(std::vector<float> loaded,
                     ReadFloatFile((dir / name).string(), static_cast<int64_t>(values->size())));
    *values = std::move(loaded);
  }
  return absl::OkStatus();
}

}  // namespace neodb::encoder::train
