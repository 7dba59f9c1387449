#pragma once
// Readers of config.json keys shared by the architectures' config parsers
// (checkpoint/config.cc, checkpoint/bert_weights.cc): each error names the
// key, as "config.json: key \"K\" <problem>".

#include <cstdint>
#include <string_view>

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

}  // namespace neodb::encoder::config_json
