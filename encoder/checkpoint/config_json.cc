#include "encoder/checkpoint/config_json.h"

#include <limits>
#include <string>

#include "absl/strings/str_cat.h"

namespace neodb::encoder::config_json {

using nlohmann::json;

absl::Status KeyError(std::string_view key, std::string_view problem) {
  return absl::InvalidArgumentError(
      absl::StrCat("config.json: key \"", std::string(key), "\" ", std::string(problem)));
}

absl::StatusOr<json> ParseObject(std::string_view json_text) {
  // The parser reports errors by exception; they stop here.
  json j;
  try {
    j = json::parse(json_text.begin(), json_text.end());
  } catch (const json::exception& e) {
    return absl::InvalidArgumentError(absl::StrCat("config.json: invalid JSON: ", e.what()));
  }
  if (!j.is_object()) {
    return absl::InvalidArgumentError("config.json: top level must be a JSON object");
  }
  return j;
}

// Reads an integer key. `required` false leaves *out unchanged when absent.
absl::Status ReadInt(const json& j, std::string_view key, bool required, int64_t* out) {
  auto it = j.find(key);
  if (it == j.end()) {
    return required ? KeyError(key, "is missing") : absl::OkStatus();
  }
  if (it->is_number_unsigned()) {
    const uint64_t v = it->get<uint64_t>();
    if (v > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {
      return KeyError(key, "is out of range");
    }
    *out = static_cast<int64_t>(v);
    return absl::OkStatus();
  }
  if (it->is_number_integer()) {
    *out = it->get<int64_t>();
    return absl::OkStatus();
  }
  return KeyError(key, absl::StrCat("must be an integer, got ", it->dump()));
}

absl::Status ReadDouble(const json& j, std::string_view key, bool required, double* out) {
  auto it = j.find(key);
  if (it == j.end()) {
    return required ? KeyError(key, "is missing") : absl::OkStatus();
  }
  if (!it->is_number()) return KeyError(key, absl::StrCat("must be a number, got ", it->dump()));
  *out = it->get<double>();
  return absl::OkStatus();
}

absl::Status CheckRange(std::string_view key, int64_t v, int64_t lo, int64_t hi) {
  if (v < lo || v > hi) {
    return KeyError(key, absl::StrCat("must be in [", lo, ", ", hi, "], got ", v));
  }
  return absl::OkStatus();
}

}  // namespace neodb::encoder::config_json
