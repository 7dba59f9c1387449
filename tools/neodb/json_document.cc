#include "tools/neodb/json_document.h"

#include <limits>

#include "absl/strings/str_cat.h"

namespace neodb::cli {
namespace {

// nlohmann keeps integers above INT64_MAX as unsigned: get<int64_t>() would
// wrap them into negative numbers silently.
bool FitsInt64(const json& j) {
  return !j.is_number_unsigned() ||
         j.get<uint64_t>() <= static_cast<uint64_t>(std::numeric_limits<int64_t>::max());
}

}  // namespace

absl::Status JsonToMetadata(const json& j, google::protobuf::Map<std::string, v1::Value>* out) {
  if (!j.is_object()) return absl::InvalidArgumentError("\"metadata\" must be an object");
  for (auto it = j.begin(); it != j.end(); ++it) {
    v1::Value v;
    if (it->is_string()) {
      v.set_string_value(it->get<std::string>());
    } else if (it->is_boolean()) {
      v.set_bool_value(it->get<bool>());
    } else if (it->is_number_integer()) {
      if (!FitsInt64(*it)) {
        return absl::InvalidArgumentError(
            absl::StrCat("metadata '", it.key(), "': integer out of int64 range"));
      }
      v.set_int_value(it->get<int64_t>());
    } else if (it->is_number()) {
      v.set_double_value(it->get<double>());
    } else {
      return absl::InvalidArgumentError(
          absl::StrCat("metadata '", it.key(), "': unsupported type"));
    }
    (*out)[it.key()] = v;
  }
  return absl::OkStatus();
}

absl::StatusOr<std::vector<float>> VectorFromJson(const JsonF32& j, const std::string& what) {
  if (!j.is_array() || j.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat(what, ": expected a non-empty array of numbers"));
  }
  std::vector<float> v;
  v.reserve(j.size());
  for (size_t i = 0; i < j.size(); ++i) {
    if (!j[i].is_number()) {
      return absl::InvalidArgumentError(absl::StrCat(what, "[", i, "] is not a number"));
    }
    v.push_back(j[i].get<float>());
  }
  return v;
}

absl::StatusOr<std::vector<float>> ParseVectorJson(std::string_view text, const std::string& what) {
  JsonF32 j;
  try {
    j = JsonF32::parse(text);
  } catch (const JsonF32::exception& e) {
    return absl::InvalidArgumentError(absl::StrCat(what, ": not JSON: ", e.what()));
  }
  if (j.is_object()) {
    if (!j.contains("vector")) {
      return absl::InvalidArgumentError(
          absl::StrCat(what, ": expected [numbers] or {\"vector\": [numbers]}"));
    }
    return VectorFromJson(j["vector"], what);
  }
  return VectorFromJson(j, what);
}

absl::StatusOr<std::optional<v1::Document>> ParseIngestLine(std::string_view line,
                                                            const std::string& where) {
  if (line.find_first_not_of(" \t\r") == std::string_view::npos) return std::nullopt;
  json j;
  try {
    j = json::parse(line);
  } catch (const json::exception& e) {
    return absl::InvalidArgumentError(absl::StrCat(where, ": not JSON: ", e.what()));
  }
  const bool has_vector = j.is_object() && j.contains("vector");
  const bool has_text = j.is_object() && j.contains("text") && j["text"].is_string();
  if (!j.is_object() || (!has_text && !has_vector) ||
      (j.contains("text") && !j["text"].is_string())) {
    return absl::InvalidArgumentError(
        absl::StrCat(where, ": expected {\"id\",\"text\",\"metadata\",\"vector\"}"));
  }
  v1::Document d;
  if (j.contains("id")) {
    const json& id = j["id"];
    if (id.is_string()) {
      d.set_id(id.get<std::string>());
    } else if (id.is_number_integer() && FitsInt64(id)) {
      d.set_id(std::to_string(id.get<int64_t>()));
    } else {
      return absl::InvalidArgumentError(
          absl::StrCat(where, ": \"id\" must be a string or an int64"));
    }
  }
  if (has_text) d.set_text(j["text"].get<std::string>());
  if (j.contains("vector_model_id")) {  // what made the vector (`neodb export` writes it)
    if (!j["vector_model_id"].is_string()) {
      return absl::InvalidArgumentError(
          absl::StrCat(where, ": \"vector_model_id\" must be a string"));
    }
    d.set_vector_model_id(j["vector_model_id"].get<std::string>());
  }
  if (has_vector) {
    // Parsed again with float numbers: the floats sent are strtof's of the
    // text, the same bits a float reader of the file would get.
    absl::StatusOr<std::vector<float>> v = ParseVectorJson(line, absl::StrCat(where, ": \"vector\""));
    if (!v.ok()) return v.status();
    d.mutable_vector()->Add(v->begin(), v->end());
  }
  if (j.contains("metadata")) {
    absl::Status s = JsonToMetadata(j["metadata"], d.mutable_metadata());
    if (!s.ok()) return absl::InvalidArgumentError(absl::StrCat(where, ": ", s.message()));
  }
  return d;
}

}  // namespace neodb::cli
