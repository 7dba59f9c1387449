#include "encoder/train/train_params.h"

#include <algorithm>

#include "common/status_macros.h"

namespace neodb::encoder::train {

void ParamLayout::Add(std::string name, std::vector<int64_t> shape, bool is_bias) {
  ParamEntry e;
  e.name = std::move(name);
  e.numel = 1;
  for (int64_t d : shape) e.numel *= d;
  e.is_matrix = shape.size() == 2;
  e.is_bias = is_bias;
  e.shape = std::move(shape);
  e.offset = total_;
  total_ += e.numel;
  entries_.push_back(std::move(e));
}

ParamLayout::ParamLayout(const NeoBertConfig& config)
    : architecture_(Architecture::kNeoBert),
      config_(config),
      hidden_size_(config.hidden_size),
      num_layers_(config.num_hidden_layers),
      max_length_(config.max_length),
      vocab_size_(config.vocab_size) {
  const int64_t c = config.hidden_size;
  const int64_t f = FfnDim(config);
  Add("encoder.weight", {config.vocab_size, c});
  for (int64_t l = 0; l < config.num_hidden_layers; ++l) {
    const std::string p = "transformer_encoder." + std::to_string(l) + ".";
    layer_first_.push_back(entries_.size());
    Add(p + "attention_norm.weight", {c});
    Add(p + "qkv.weight", {3 * c, c});
    Add(p + "wo.weight", {c, c});
    Add(p + "ffn_norm.weight", {c});
    Add(p + "ffn.w12.weight", {2 * f, c});
    Add(p + "ffn.w3.weight", {c, f});
  }
  Add("layer_norm.weight", {c});
}

ParamLayout::ParamLayout(const BertConfig& config)
    : architecture_(Architecture::kBert),
      bert_config_(config),
      hidden_size_(config.hidden_size),
      num_layers_(config.num_hidden_layers),
      max_length_(config.max_position_embeddings),
      vocab_size_(config.vocab_size) {
  const int64_t c = config.hidden_size;
  const int64_t i = config.intermediate_size;
  // Order = BertEmbeddingTensor, then BertLayerTensor per layer.
  Add("embeddings.word_embeddings.weight", {config.vocab_size, c});
  Add("embeddings.position_embeddings.weight", {config.max_position_embeddings, c});
  Add("embeddings.token_type_embeddings.weight", {config.type_vocab_size, c});
  Add("embeddings.LayerNorm.weight", {c});
  Add("embeddings.LayerNorm.bias", {c}, true);
  for (int64_t l = 0; l < config.num_hidden_layers; ++l) {
    const std::string p = "encoder.layer." + std::to_string(l) + ".";
    layer_first_.push_back(entries_.size());
    for (const char* part : {"query", "key", "value"}) {
      Add(p + "attention.self." + part + ".weight", {c, c});
      Add(p + "attention.self." + part + ".bias", {c}, true);
    }
    Add(p + "attention.output.dense.weight", {c, c});
    Add(p + "attention.output.dense.bias", {c}, true);
    Add(p + "attention.output.LayerNorm.weight", {c});
    Add(p + "attention.output.LayerNorm.bias", {c}, true);
    Add(p + "intermediate.dense.weight", {i, c});
    Add(p + "intermediate.dense.bias", {i}, true);
    Add(p + "output.dense.weight", {c, i});
    Add(p + "output.dense.bias", {c}, true);
    Add(p + "output.LayerNorm.weight", {c});
    Add(p + "output.LayerNorm.bias", {c}, true);
  }
}

const NeoBertConfig& ParamLayout::config() const {
  NEODB_CHECK(architecture_ == Architecture::kNeoBert);
  return config_;
}

const BertConfig& ParamLayout::bert_config() const {
  NEODB_CHECK(architecture_ == Architecture::kBert);
  return bert_config_;
}

const ParamEntry& ParamLayout::final_norm() const {
  NEODB_CHECK(architecture_ == Architecture::kNeoBert);
  return entries_.back();
}

int64_t ParamLayout::LayerBegin(int64_t l) const {
  NEODB_CHECK(l >= 0 && l <= num_layers_);
  if (l == num_layers_) {
    return architecture_ == Architecture::kNeoBert ? final_norm().offset : total_;
  }
  return entries_[layer_first_[l]].offset;
}

std::vector<int64_t> PassThroughDims(const TrainParams<float>& params) {
  const ParamLayout& layout = params.layout;
  if (layout.architecture() != Architecture::kNeoBert) return {};
  const int64_t c = layout.config().hidden_size;
  std::vector<uint8_t> used(static_cast<size_t>(c), 0);
  for (int64_t l = 0; l < layout.config().num_hidden_layers; ++l) {
    for (const LayerTensor t : {kQkv, kW12}) {  // read the residual stream: [out, C]
      const ParamEntry& e = layout.layer(l, t);
      const float* w = params.at(e);
      for (int64_t r = 0; r < e.shape[0]; ++r) {
        for (int64_t j = 0; j < c; ++j) used[j] |= w[r * c + j] != 0.0f;
      }
    }
    for (const LayerTensor t : {kWo, kW3}) {  // write it: [C, in]
      const ParamEntry& e = layout.layer(l, t);
      const float* w = params.at(e);
      for (int64_t j = 0; j < c; ++j) {
        const float* row = w + j * e.shape[1];
        used[j] |= std::any_of(row, row + e.shape[1], [](float x) { return x != 0.0f; });
      }
    }
  }
  std::vector<int64_t> dims;
  for (int64_t j = 0; j < c; ++j) {
    if (!used[j]) dims.push_back(j);
  }
  return dims;
}

int64_t FfnDim(const NeoBertConfig& config) {
  const int64_t f = static_cast<int64_t>(2 * config.intermediate_size / 3);
  return (f + 7) / 8 * 8;
}

int64_t ParamLayout::FirstTrainedLayer(int64_t train_layers) const {
  const int64_t n = num_layers_;
  if (train_layers <= 0 || train_layers >= n) return 0;
  return n - train_layers;
}

int64_t ParamLayout::TrainableBegin(int64_t train_layers) const {
  const int64_t n = num_layers_;
  if (train_layers <= 0 || train_layers >= n) return 0;
  return LayerBegin(n - train_layers);
}

TrainParams<float> ParamsFromWeights(const NeoBertWeights& weights) {
  TrainParams<float> params(weights.config);
  const ParamLayout& layout = params.layout;
  auto copy = [&](const Tensor& src, const ParamEntry& e) {
    NEODB_CHECK(src.numel() == e.numel);
    Tensor f32 = src.ToF32();
    const float* s = f32.data<float>();
    std::copy(s, s + e.numel, params.at(e));
  };
  NEODB_CHECK(static_cast<int64_t>(weights.layers.size()) == weights.config.num_hidden_layers);
  copy(weights.embeddings, layout.embeddings());
  for (int64_t l = 0; l < weights.config.num_hidden_layers; ++l) {
    const LayerWeights& w = weights.layers[l];
    copy(w.attention_norm, layout.layer(l, kAttentionNorm));
    copy(w.qkv, layout.layer(l, kQkv));
    copy(w.wo, layout.layer(l, kWo));
    copy(w.ffn_norm, layout.layer(l, kFfnNorm));
    copy(w.w12, layout.layer(l, kW12));
    copy(w.w3, layout.layer(l, kW3));
  }
  copy(weights.final_norm, layout.final_norm());
  return params;
}

NeoBertWeights WeightsFromParams(const TrainParams<float>& params, const NeoBertWeights& original) {
  const ParamLayout& layout = params.layout;
  auto make = [&](const ParamEntry& e) {
    Tensor t = Tensor::Empty(e.shape, DType::kF32);
    std::copy(params.at(e), params.at(e) + e.numel, t.data<float>());
    return t;
  };
  NeoBertWeights w;
  w.config = layout.config();
  w.embeddings = make(layout.embeddings());
  for (int64_t l = 0; l < w.config.num_hidden_layers; ++l) {
    LayerWeights lw;
    lw.attention_norm = make(layout.layer(l, kAttentionNorm));
    lw.qkv = make(layout.layer(l, kQkv));
    lw.wo = make(layout.layer(l, kWo));
    lw.ffn_norm = make(layout.layer(l, kFfnNorm));
    lw.w12 = make(layout.layer(l, kW12));
    lw.w3 = make(layout.layer(l, kW3));
    w.layers.push_back(std::move(lw));
  }
  w.final_norm = make(layout.final_norm());
  w.decoder_weight = original.decoder_weight;
  w.decoder_bias = original.decoder_bias;
  // The trained weights compute a different function: a fresh fingerprint.
  w.model_id = ComputeModelId(w);
  return w;
}

std::vector<float> TensorToVector(const Tensor& t) {
  const float* p = t.data<float>();
  return std::vector<float>(p, p + t.numel());
}

Tensor VectorToTensor(const std::vector<float>& v, Shape shape) {
  Tensor t = Tensor::Empty(std::move(shape), DType::kF32);
  std::copy(v.begin(), v.end(), t.data<float>());
  return t;
}

uint64_t SplitMix64::Next() {
  uint64_t z = (state_ += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

double SplitMix64::Uniform() { return static_cast<double>(Next() >> 11) * 0x1.0p-53; }

template <typename T>
TrainParams<T> RandomParams(const ParamLayout& layout, uint64_t seed, double scale,
                            double norm_jitter) {
  TrainParams<T> params(layout);
  SplitMix64 rng(seed);
  for (const ParamEntry& e : params.layout.entries()) {
    T* p = params.at(e);
    for (int64_t i = 0; i < e.numel; ++i) {
      const double u = 2 * rng.Uniform() - 1;
      p[i] = static_cast<T>(e.is_matrix || e.is_bias ? scale * u : 1 + norm_jitter * u);
    }
  }
  return params;
}

template <typename T>
TrainParams<T> RandomParams(const NeoBertConfig& config, uint64_t seed, double scale,
                            double norm_jitter) {
  return RandomParams<T>(ParamLayout(config), seed, scale, norm_jitter);
}

template TrainParams<float> RandomParams<float>(const NeoBertConfig&, uint64_t, double, double);
template TrainParams<double> RandomParams<double>(const NeoBertConfig&, uint64_t, double, double);
template TrainParams<float> RandomParams<float>(const ParamLayout&, uint64_t, double, double);
template TrainParams<double> RandomParams<double>(const ParamLayout&, uint64_t, double, double);

}  // namespace neodb::encoder::train
