#include "encoder/cuda/testing/random_weights.h"

#include <cstdio>
#include <cstring>
#include <memory>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace neodb::encoder::testing {
namespace {

uint64_t SplitMix64(uint64_t& state) {
  uint64_t z = (state += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

Tensor Uniform(Shape shape, uint64_t seed, float lo, float hi) {
  Tensor t = Tensor::Empty(std::move(shape), DType::kF32);
  FillUniform(t.data<float>(), t.numel(), seed, lo, hi);
  return t;
}

}  // namespace

int64_t FfnDim(const NeoBertConfig& config) {
  const int64_t f = static_cast<int64_t>(2 * config.intermediate_size / 3);
  return (f + 7) / 8 * 8;
}

void FillUniform(float* out, int64_t n, uint64_t seed, float lo, float hi) {
  uint64_t state = seed * 0x2545f4914f6cdd1dull + 1;
  const float span = hi - lo;
  for (int64_t i = 0; i < n; ++i) {
    const float u = static_cast<float>(SplitMix64(state) >> 40) * (1.0f / 16777216.0f);
    out[i] = lo + span * u;
  }
}

NeoBertWeights MakeRandomWeights(const NeoBertConfig& cfg, uint64_t seed, float scale,
                                 float norm_jitter) {
  const int64_t c = cfg.hidden_size, f = FfnDim(cfg);
  uint64_t tensor = 0;
  auto next = [&] { return seed * 1000003ull + (++tensor); };
  NeoBertWeights w;
  w.config = cfg;
  w.embeddings = Uniform({cfg.vocab_size, c}, next(), -scale, scale);
  for (int64_t i = 0; i < cfg.num_hidden_layers; ++i) {
    LayerWeights l;
    l.attention_norm = Uniform({c}, next(), 1 - norm_jitter, 1 + norm_jitter);
    l.qkv = Uniform({3 * c, c}, next(), -scale, scale);
    l.wo = Uniform({c, c}, next(), -scale, scale);
    l.ffn_norm = Uniform({c}, next(), 1 - norm_jitter, 1 + norm_jitter);
    l.w12 = Uniform({2 * f, c}, next(), -scale, scale);
    l.w3 = Uniform({c, f}, next(), -scale, scale);
    w.layers.push_back(std::move(l));
  }
  w.final_norm = Uniform({c}, next(), 1 - norm_jitter, 1 + norm_jitter);
  w.model_id = absl::StrCat("random-", seed);
  return w;
}

absl::Status WriteCheckpoint(const NeoBertWeights& w, const std::string& dir) {
  const NeoBertConfig& cfg = w.config;
  // config.json as the release writes it (NEOBERT.md §1).
  {
    const std::string json = absl::StrCat(
        "{\n  \"model_type\": \"neobert\",\n  \"architectures\": [\"NeoBERTLMHead\"],\n"
        "  \"hidden_size\": ",
        cfg.hidden_size, ",\n  \"num_hidden_layers\": ", cfg.num_hidden_layers,
        ",\n  \"num_attention_heads\": ", cfg.num_attention_heads,
        ",\n  \"dim_head\": ", cfg.head_dim(),
        ",\n  \"intermediate_size\": ", cfg.intermediate_size,
        ",\n  \"vocab_size\": ", cfg.vocab_size, ",\n  \"max_length\": ", cfg.max_length,
        ",\n  \"norm_eps\": ", cfg.norm_eps, ",\n  \"rope_theta\": ", cfg.rope_theta,
        ",\n  \"pad_token_id\": ", cfg.pad_token_id, ",\n  \"torch_dtype\": \"float32\"\n}\n");
    const std::string path = dir + "/config.json";
    std::unique_ptr<FILE, int (*)(FILE*)> fp(std::fopen(path.c_str(), "wb"), &std::fclose);
    if (!fp) return absl::InternalError(absl::StrCat("cannot create ", path));
    if (std::fwrite(json.data(), 1, json.size(), fp.get()) != json.size()) {
      return absl::InternalError(absl::StrCat("short write to ", path));
    }
  }
  std::vector<std::pair<std::string, const Tensor*>> tensors;
  tensors.emplace_back("model.encoder.weight", &w.embeddings);
  for (size_t i = 0; i < w.layers.size(); ++i) {
    const std::string p = absl::StrCat("model.transformer_encoder.", i, ".");
    const LayerWeights& l = w.layers[i];
    tensors.emplace_back(p + "attention_norm.weight", &l.attention_norm);
    tensors.emplace_back(p + "qkv.weight", &l.qkv);
    tensors.emplace_back(p + "wo.weight", &l.wo);
    tensors.emplace_back(p + "ffn_norm.weight", &l.ffn_norm);
    tensors.emplace_back(p + "ffn.w12.weight", &l.w12);
    tensors.emplace_back(p + "ffn.w3.weight", &l.w3);
  }
  tensors.emplace_back("model.layer_norm.weight", &w.final_norm);
  std::string header = "{\"__metadata__\":{\"format\":\"pt\"}";
  uint64_t offset = 0;
  for (const auto& [name, t] : tensors) {
    const uint64_t bytes = static_cast<uint64_t>(t->numel()) * 4;
    absl::StrAppend(&header, ",\"", name, "\":{\"dtype\":\"F32\",\"shape\":[",
                    absl::StrJoin(t->shape(), ","), "],\"data_offsets\":[", offset, ",",
                    offset + bytes, "]}");
    offset += bytes;
  }
  header += "}";
  while (header.size() % 8 != 0) header += ' ';
  const std::string path = dir + "/model.safetensors";
  std::unique_ptr<FILE, int (*)(FILE*)> fp(std::fopen(path.c_str(), "wb"), &std::fclose);
  if (!fp) return absl::InternalError(absl::StrCat("cannot create ", path));
  const uint64_t n = header.size();
  unsigned char len[8];
  for (int i = 0; i < 8; ++i) len[i] = static_cast<unsigned char>(n >> (8 * i));
  bool ok =
      std::fwrite(len, 1, 8, fp.get()) == 8 && std::fwrite(header.data(), 1, n, fp.get()) == n;
  for (const auto& [name, t] : tensors) {
    const Tensor f32 = t->ToF32();
    ok = ok &&
         std::fwrite(f32.raw_data(), 4, f32.numel(), fp.get()) == static_cast<size_t>(f32.numel());
  }
  if (!ok) return absl::InternalError(absl::StrCat("short write to ", path));
  if (std::fclose(fp.release()) != 0) return absl::InternalError("close failed: " + path);
  return absl::OkStatus();
}

}  // namespace neodb::encoder::testing
