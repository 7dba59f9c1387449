#pragma once
// Readers of config.json keys shared by the architectures' config parsers
// (checkpoint/config.cc, checkpoint/bert_weights.cc): each error names the
// key, as "config.json: key \"K\" <problem>".

#include <cstdint>
#include <string_view>

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "nlohmann/json.hpp"

namespace neodb::encoder::config_json {

// Upper bounds of every architecture's sizes, which keep every product of
// them (V·C, L·F·C, …) far from int64 overflow; no real encoder comes near.
inline constexpr int64_t kMaxDim = int64_t{1} << 24;
inline constexpr int64_t kMaxLayers = 4096;

absl::Status KeyError(std::string_view key, std::string_view problem);
// config.json text as a JSON object; INVALID_ARGUMENT for bad JSON or
// another top-level type.
absl::StatusOr<nlohmann::json> ParseObject(std::string_view json_text);
// An integer key (int64 range). `required` false leaves *out as it is when
// the key is absent.
absl::Status ReadInt(const nlohmann::json& j, std::string_view key, bool required, int64_t* out);
// A number key, as ReadInt.
absl::Status ReadDouble(const nlohmann::json& j, std::string_view key, bool required,
                        double* out);
// v in [lo, hi], else KeyError naming the range.
absl::Status CheckRange(std::string_view key, int64_t v, int64_t lo, int64_t hi);

// The sizes every architecture's config.json has (hidden_size,
// num_hidden_layers, num_attention_heads, intermediate_size, vocab_size),
// each required, read into the members of those names of *c (a BertConfig or
// a NeoBertConfig).
template <typename Config>
absl::Status ReadCommonSizes(const nlohmann::json& j, Config* c) {
  RETURN_IF_ERROR(ReadInt(j, "hidden_size", true, &c->hidden_size));
  RETURN_IF_ERROR(ReadInt(j, "num_hidden_layers", true, &c->num_hidden_layers));
  RETURN_IF_ERROR(ReadInt(j, "num_attention_heads", true, &c->num_attention_heads));
  RETURN_IF_ERROR(ReadInt(j, "intermediate_size", true, &c->intermediate_size));
  return ReadInt(j, "vocab_size", true, &c->vocab_size);
}

// The checks of those sizes every architecture shares: each in range
// (intermediate_size at least `min_intermediate`), pad_token_id a row of the
// vocabulary, hidden_size divisible by num_attention_heads.
template <typename Config>
absl::Status CheckCommonSizes(const Config& c, int64_t min_intermediate) {
  RETURN_IF_ERROR(CheckRange("hidden_size", c.hidden_size, 1, kMaxDim));
  RETURN_IF_ERROR(CheckRange("num_hidden_layers", c.num_hidden_layers, 1, kMaxLayers));
  RETURN_IF_ERROR(CheckRange("num_attention_heads", c.num_attention_heads, 1, kMaxDim));
  RETURN_IF_ERROR(CheckRange("intermediate_size", c.intermediate_size, min_intermediate, kMaxDim));
  RETURN_IF_ERROR(CheckRange("vocab_size", c.vocab_size, 1, kMaxDim));
  RETURN_IF_ERROR(CheckRange("pad_token_id", c.pad_token_id, 0, c.vocab_size - 1));
  if (c.hidden_size % c.num_attention_heads != 0) {
    return KeyError("hidden_size", absl::StrCat("(", c.hidden_size,
                                                ") must be divisible by num_attention_heads (",
                                                c.num_attention_heads, ")"));
  }
  return absl::OkStatus();
}

}  // namespace neodb::encoder::config_json
