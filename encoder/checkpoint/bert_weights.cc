#include "encoder/checkpoint/bert_weights.h"

#include <xxhash.h>

#include <bit>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>
#include <map>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "encoder/checkpoint/safetensors.h"
#include "encoder/checkpoint/weights.h"
#include "encoder/core/file_util.h"
#include "encoder/checkpoint/config_json.h"
#include "nlohmann/json.hpp"

namespace neodb::encoder {

static_assert(std::endian::native == std::endian::little);

namespace {

using nlohmann::json;
using config_json::CheckRange;
using config_json::kMaxDim;
using config_json::KeyError;
using config_json::ReadDouble;
using config_json::ReadInt;

// config.json is a few hundred bytes; a megabyte is far past any real one.
constexpr size_t kMaxConfigBytes = size_t{1} << 20;

// A string key that, when present, must be one of `allowed`.
absl::Status CheckStringKey(const json& j, std::string_view key,
                            std::initializer_list<std::string_view> allowed,
                            std::string_view why) {
  auto it = j.find(key);
  if (it == j.end() || it->is_null()) return absl::OkStatus();
  if (it->is_string()) {
    for (std::string_view a : allowed) {
      if (it->get<std::string>() == a) return absl::OkStatus();
    }
  }
  return KeyError(key, absl::StrCat("is ", it->dump(), "; neodb runs ", std::string(why)));
}

std::string ShapeString(const Shape& s) { return absl::StrCat("[", absl::StrJoin(s, ", "), "]"); }

// One tensor the loader expects: its name without prefix and its shape.
struct Expected {
  std::string name;
  Shape shape;
};

bool Ignored(const std::string& name) {
  return absl::StartsWith(name, "pooler.") || absl::StartsWith(name, "cls.") ||
         name == "embeddings.position_ids";
}

// Copies `parts` (each [rows_i, cols...]) one after another along dim 0.
Tensor Stack(const std::vector<Tensor>& parts) {
  int64_t rows = 0;
  for (const Tensor& p : parts) rows += p.dim(0);
  Shape shape = parts.front().shape();
  shape[0] = rows;
  Tensor out = Tensor::Empty(shape, DType::kF32);
  char* dst = static_cast<char*>(out.raw_data());
  for (const Tensor& p : parts) {
    std::memcpy(dst, p.raw_data(), p.nbytes());
    dst += p.nbytes();
  }
  return out;
}

}  // namespace

absl::Status BertConfig::Validate() const {
  RETURN_IF_ERROR(config_json::CheckCommonSizes(*this, /*min_intermediate=*/1));
  // [CLS] x [SEP] needs three positions.
  RETURN_IF_ERROR(CheckRange("max_position_embeddings", max_position_embeddings, 3, kMaxDim));
  RETURN_IF_ERROR(CheckRange("type_vocab_size", type_vocab_size, 1, kMaxDim));
  if (!(std::isfinite(layer_norm_eps) && layer_norm_eps > 0 && layer_norm_eps < 1)) {
    return KeyError("layer_norm_eps", absl::StrCat("must be in (0, 1), got ", layer_norm_eps));
  }
  return absl::OkStatus();
}

absl::StatusOr<BertConfig> BertConfig::FromJson(std::string_view json_text) {
  ASSIGN_OR_RETURN(const json j, config_json::ParseObject(json_text));
  try {
    auto mt = j.find("model_type");
    if (mt == j.end() || !mt->is_string() || mt->get<std::string>() != "bert") {
      return KeyError("model_type", absl::StrCat("must be \"bert\", got ",
                                                 mt == j.end() ? "nothing" : mt->dump()));
    }
    BertConfig c;
    RETURN_IF_ERROR(config_json::ReadCommonSizes(j, &c));
    RETURN_IF_ERROR(ReadInt(j, "max_position_embeddings", true, &c.max_position_embeddings));
    RETURN_IF_ERROR(ReadInt(j, "type_vocab_size", false, &c.type_vocab_size));
    RETURN_IF_ERROR(ReadInt(j, "pad_token_id", false, &c.pad_token_id));
    RETURN_IF_ERROR(ReadDouble(j, "layer_norm_eps", false, &c.layer_norm_eps));
    // transformers' BertConfig defaults hidden_act to "gelu".
    RETURN_IF_ERROR(CheckStringKey(j, "hidden_act", {"gelu"},
                                   "BERT with \"gelu\" (the erf form) only"));
    RETURN_IF_ERROR(CheckStringKey(j, "position_embedding_type", {"absolute"},
                                   "learned absolute positions only"));
    RETURN_IF_ERROR(c.Validate());
    return c;
  } catch (const std::exception& e) {  // defensive: accessors on a wrong type
    return absl::InvalidArgumentError(absl::StrCat("config.json: ", e.what()));
  }
}

std::string BertConfig::ToJson() const {
  json j = json::object();
  j["model_type"] = "bert";
  j["hidden_size"] = hidden_size;
  j["num_hidden_layers"] = num_hidden_layers;
  j["num_attention_heads"] = num_attention_heads;
  j["intermediate_size"] = intermediate_size;
  j["vocab_size"] = vocab_size;
  j["max_position_embeddings"] = max_position_embeddings;
  j["type_vocab_size"] = type_vocab_size;
  j["pad_token_id"] = pad_token_id;
  j["layer_norm_eps"] = layer_norm_eps;
  j["hidden_act"] = "gelu";
  return j.dump(2) + "\n";
}

absl::StatusOr<BertWeights> LoadBertCheckpoint(const std::string& dir) {
  BertWeights w;
  ASSIGN_OR_RETURN(const std::string config_text,
                   ReadWholeFile(dir + "/config.json", kMaxConfigBytes));
  {
    absl::StatusOr<BertConfig> c = BertConfig::FromJson(config_text);
    if (!c.ok()) {
      return absl::Status(c.status().code(), absl::StrCat(dir, "/", c.status().message()));
    }
    w.config = *std::move(c);
  }
  const BertConfig& c = w.config;
  ASSIGN_OR_RETURN(const std::string path, WeightsFilePath(dir));
  ASSIGN_OR_RETURN(SafetensorsFile file, SafetensorsFile::Open(path));

  const int64_t C = c.hidden_size, I = c.intermediate_size;
  std::vector<Expected> expected = {
      {"embeddings.word_embeddings.weight", {c.vocab_size, C}},
      {"embeddings.position_embeddings.weight", {c.max_position_embeddings, C}},
      {"embeddings.token_type_embeddings.weight", {c.type_vocab_size, C}},
      {"embeddings.LayerNorm.weight", {C}},
      {"embeddings.LayerNorm.bias", {C}},
  };
  for (int64_t i = 0; i < c.num_hidden_layers; ++i) {
    const std::string p = absl::StrCat("encoder.layer.", i, ".");
    for (const char* part : {"query", "key", "value"}) {
      expected.push_back({absl::StrCat(p, "attention.self.", part, ".weight"), {C, C}});
      expected.push_back({absl::StrCat(p, "attention.self.", part, ".bias"), {C}});
    }
    expected.push_back({p + "attention.output.dense.weight", {C, C}});
    expected.push_back({p + "attention.output.dense.bias", {C}});
    expected.push_back({p + "attention.output.LayerNorm.weight", {C}});
    expected.push_back({p + "attention.output.LayerNorm.bias", {C}});
    expected.push_back({p + "intermediate.dense.weight", {I, C}});
    expected.push_back({p + "intermediate.dense.bias", {I}});
    expected.push_back({p + "output.dense.weight", {C, I}});
    expected.push_back({p + "output.dense.bias", {C}});
    expected.push_back({p + "output.LayerNorm.weight", {C}});
    expected.push_back({p + "output.LayerNorm.bias", {C}});
  }

  // Every stored tensor, by its name without the optional "bert." prefix.
  std::map<std::string, const SafetensorsFile::TensorInfo*> stored;
  std::vector<std::string> unexpected;
  for (const SafetensorsFile::TensorInfo& t : file.tensors()) {
    const std::string bare = absl::StartsWith(t.name, "bert.") ? t.name.substr(5) : t.name;
    if (!stored.emplace(bare, &t).second) {
      return absl::InvalidArgumentError(absl::StrCat(
          path, ": tensor \"", bare, "\" is stored both with and without the \"bert.\" prefix"));
    }
  }
  std::map<std::string, Tensor> loaded;
  std::vector<std::string> missing;
  XXH3_state_t* state = XXH3_createState();
  NEODB_CHECK(state != nullptr);
  XXH3_64bits_reset(state);
  const std::string canonical = c.ToJson();
  XXH3_64bits_update(state, canonical.data(), canonical.size());
  absl::Status status;
  for (const Expected& e : expected) {
    auto it = stored.find(e.name);
    if (it == stored.end()) {
      missing.push_back(e.name);
      continue;
    }
    if (it->second->shape != e.shape) {
      status = absl::InvalidArgumentError(
          absl::StrCat(path, ": tensor \"", it->second->name, "\" has shape ",
                       ShapeString(it->second->shape), "; config.json needs ",
                       ShapeString(e.shape)));
      break;
    }
    absl::StatusOr<Tensor> t = file.Load(it->second->name);
    if (!t.ok()) {
      status = t.status();
      break;
    }
    XXH3_64bits_update(state, e.name.c_str(), e.name.size() + 1);
    XXH3_64bits_update(state, e.shape.data(), e.shape.size() * sizeof(int64_t));
    XXH3_64bits_update(state, t->raw_data(), t->nbytes());
    loaded.emplace(e.name, *std::move(t));
    stored.erase(it);
  }
  const uint64_t hash = XXH3_64bits_digest(state);
  XXH3_freeState(state);
  RETURN_IF_ERROR(status);
  if (!missing.empty()) {
    const size_t shown = std::min<size_t>(missing.size(), 10);
    return absl::InvalidArgumentError(absl::StrCat(
        path, ": missing tensor", missing.size() > 1 ? "s " : " \"",
        absl::StrJoin(missing.begin(), missing.begin() + shown, "\", \""),
        missing.size() > 1 ? "" : "\"",
        missing.size() > shown ? absl::StrCat(" and ", missing.size() - shown, " more") : "",
        " (a BERT with this config.json; looked up with and without \"bert.\")"));
  }
  for (const auto& [name, info] : stored) {
    if (!Ignored(name)) unexpected.push_back(info->name);
  }
  if (!unexpected.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat(path, ": unexpected tensor(s) \"", absl::StrJoin(unexpected, "\", \""),
                     "\" (not part of a BERT encoder with this config.json)"));
  }

  auto take = [&](const std::string& name) { return loaded.at(name); };
  w.word_embeddings = take("embeddings.word_embeddings.weight");
  // Positions plus the one segment's type row, once (a copy: the mapping is
  // read-only in spirit, and F16 files were converted anyway).
  {
    const Tensor pos = take("embeddings.position_embeddings.weight");
    const Tensor type = take("embeddings.token_type_embeddings.weight");
    Tensor sum = Tensor::Empty(pos.shape(), DType::kF32);
    const float* t0 = type.data<float>();
    for (int64_t p = 0; p < pos.dim(0); ++p) {
      const float* src = pos.data<float>() + p * C;
      float* dst = sum.data<float>() + p * C;
      for (int64_t k = 0; k < C; ++k) dst[k] = src[k] + t0[k];
    }
    w.position_embeddings = std::move(sum);
  }
  w.embedding_norm_weight = take("embeddings.LayerNorm.weight");
  w.embedding_norm_bias = take("embeddings.LayerNorm.bias");
  w.layers.resize(c.num_hidden_layers);
  for (int64_t i = 0; i < c.num_hidden_layers; ++i) {
    const std::string p = absl::StrCat("encoder.layer.", i, ".");
    const std::string s = p + "attention.self.";
    BertLayerWeights& l = w.layers[i];
    l.qkv = Stack({take(s + "query.weight"), take(s + "key.weight"), take(s + "value.weight")});
    l.qkv_bias = Stack({take(s + "query.bias"), take(s + "key.bias"), take(s + "value.bias")});
    l.wo = take(p + "attention.output.dense.weight");
    l.wo_bias = take(p + "attention.output.dense.bias");
    l.attention_norm_weight = take(p + "attention.output.LayerNorm.weight");
    l.attention_norm_bias = take(p + "attention.output.LayerNorm.bias");
    l.w1 = take(p + "intermediate.dense.weight");
    l.w1_bias = take(p + "intermediate.dense.bias");
    l.w2 = take(p + "output.dense.weight");
    l.w2_bias = take(p + "output.dense.bias");
    l.ffn_norm_weight = take(p + "output.LayerNorm.weight");
    l.ffn_norm_bias = take(p + "output.LayerNorm.bias");
  }
  char buf[24];
  std::snprintf(buf, sizeof(buf), "bert-%016llx", static_cast<unsigned long long>(hash));
  w.model_id = buf;
  return w;
}

int64_t ParameterCount(const BertWeights& w) {
  int64_t n = w.word_embeddings.numel() + w.position_embeddings.numel() +
              w.embedding_norm_weight.numel() + w.embedding_norm_bias.numel();
  for (const BertLayerWeights& l : w.layers) {
    for (const Tensor* t : {&l.qkv, &l.qkv_bias, &l.wo, &l.wo_bias, &l.attention_norm_weight,
                            &l.attention_norm_bias, &l.w1, &l.w1_bias, &l.w2, &l.w2_bias,
                            &l.ffn_norm_weight, &l.ffn_norm_bias}) {
      n += t->numel();
    }
  }
  return n;
}

}  // namespace neodb::encoder
