#include "encoder/checkpoint/config.h"

#include <cmath>
#include <limits>

#include "absl/strings/str_cat.h"
#include "encoder/checkpoint/config_json.h"
#include "nlohmann/json.hpp"

namespace neodb::encoder {
namespace {

using nlohmann::json;
using config_json::KeyError;
using config_json::ReadDouble;
using config_json::ReadInt;

absl::StatusOr<NeoBertConfig> FromJsonObject(const json& j) {
  if (!j.is_object()) {
    return absl::InvalidArgumentError("config.json: top level must be a JSON object");
  }
  auto mt = j.find("model_type");
  if (mt == j.end()) return KeyError("model_type", "is missing");
  if (!mt->is_string() || mt->get<std::string>() != "neobert") {
    return KeyError("model_type", absl::StrCat("must be \"neobert\", got ", mt->dump()));
  }
  NeoBertConfig c;
  RETURN_IF_ERROR(config_json::ReadCommonSizes(j, &c));
  if (j.contains("max_length")) {
    RETURN_IF_ERROR(ReadInt(j, "max_length", true, &c.max_length));
    if (j.contains("max_position_embeddings")) {
      int64_t alias = 0;
      RETURN_IF_ERROR(ReadInt(j, "max_position_embeddings", true, &alias));
      if (alias != c.max_length) {
        return KeyError(
            "max_position_embeddings",
            absl::StrCat("(", alias, ") disagrees with \"max_length\" (", c.max_length, ")"));
      }
    }
  } else if (j.contains("max_position_embeddings")) {
    RETURN_IF_ERROR(ReadInt(j, "max_position_embeddings", true, &c.max_length));
  } else {
    return KeyError("max_length", "is missing (nor is its alias \"max_position_embeddings\")");
  }
  // norm_eps has conflicting defaults in the wild (1e-5 vs 1e-6): it must be
  // stated by the file, never guessed.
  RETURN_IF_ERROR(ReadDouble(j, "norm_eps", true, &c.norm_eps));
  RETURN_IF_ERROR(ReadInt(j, "pad_token_id", false, &c.pad_token_id));
  RETURN_IF_ERROR(ReadDouble(j, "rope_theta", false, &c.rope_theta));
  if (j.contains("dim_head")) {
    int64_t dim_head = 0;
    RETURN_IF_ERROR(ReadInt(j, "dim_head", true, &dim_head));
    RETURN_IF_ERROR(c.Validate());
    if (dim_head != c.head_dim()) {
      return KeyError("dim_head", absl::StrCat("is ", dim_head,
                                               " but hidden_size / "
                                               "num_attention_heads is ",
                                               c.head_dim()));
    }
  }
  RETURN_IF_ERROR(c.Validate());
  return c;
}

}  // namespace

int64_t NeoBertConfig::ffn_dim() const {
  // Python: int(2 * intermediate_size / 3), then up to a multiple of 8.
  const int64_t f = 2 * intermediate_size / 3;
  return (f + 7) / 8 * 8;
}

absl::Status NeoBertConfig::Validate() const {
  // ffn_dim() = 2·intermediate_size/3 rounded up to 8: at least 2 for a non-empty FFN.
  RETURN_IF_ERROR(config_json::CheckCommonSizes(*this, /*min_intermediate=*/2));
  RETURN_IF_ERROR(config_json::CheckRange("max_length", max_length, 1, config_json::kMaxDim));
  // RoPE rotates adjacent pairs, so a head needs an even width.
  if (head_dim() % 2 != 0) {
    return KeyError("hidden_size", absl::StrCat("/ num_attention_heads = ", head_dim(),
                                                " must be even (RoPE rotates pairs)"));
  }
  if (!(std::isfinite(norm_eps) && norm_eps > 0 && norm_eps < 1)) {
    return KeyError("norm_eps", absl::StrCat("must be in (0, 1), got ", norm_eps));
  }
  if (!(std::isfinite(rope_theta) && rope_theta > 1)) {
    return KeyError("rope_theta", absl::StrCat("must be a finite number > 1, got ", rope_theta));
  }
  return absl::OkStatus();
}

absl::StatusOr<NeoBertConfig> NeoBertConfig::FromJson(std::string_view json_text) {
  ASSIGN_OR_RETURN(const json j, config_json::ParseObject(json_text));
  try {
    return FromJsonObject(j);
  } catch (const std::exception& e) {  // defensive: json accessors on a wrong type
    return absl::InvalidArgumentError(absl::StrCat("config.json: ", e.what()));
  }
}

absl::StatusOr<NeoBertConfig> NeoBertConfig::FromFile(const std::string& path, Env* env) {
  ASSIGN_OR_RETURN(const std::string text, ReadFileToString(env, path));
  absl::StatusOr<NeoBertConfig> c = FromJson(text);
  if (!c.ok()) {
    return absl::Status(c.status().code(), absl::StrCat(path, ": ", c.status().message()));
  }
  return c;
}

std::string NeoBertConfig::ToJson() const { return ToJson("float32"); }

std::string NeoBertConfig::ToJson(std::string_view torch_dtype) const {
  json j = json::object();  // std::map-backed: keys come out sorted
  j["architectures"] = json::array({"NeoBERTLMHead"});
  j["model_type"] = "neobert";
  j["hidden_size"] = hidden_size;
  j["num_hidden_layers"] = num_hidden_layers;
  j["num_attention_heads"] = num_attention_heads;
  j["dim_head"] = num_attention_heads > 0 ? head_dim() : 0;
  j["intermediate_size"] = intermediate_size;
  j["vocab_size"] = vocab_size;
  j["max_length"] = max_length;
  j["pad_token_id"] = pad_token_id;
  j["norm_eps"] = norm_eps;
  // The release has no rope_theta key; write it only for a derivative.
  if (rope_theta != 10000.0) j["rope_theta"] = rope_theta;
  j["torch_dtype"] = std::string(torch_dtype);
  return j.dump(2) + "\n";
}

}  // namespace neodb::encoder
