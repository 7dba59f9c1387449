#include "tools/neodb/json_document.h"

#include <limits>

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "db/metadata_types.h"

namespace neodb::cli {
namespace {

// nlohmann keeps integers above INT64_MAX as unsigned: get<int64_t>() would
// wrap them into negative numbers silently.
bool FitsInt64(const json& j) {
  return !j.is_number_unsigned() ||
         j.get<uint64_t>() <= static_cast<uint64_t>(std::numeric_limits<int64_t>::max());
}

}  // namespace

namespace {

// One metadata value. Besides JSON's own types: {"datetime": RFC 3339} is a
// datetime and {"lat": n, "lon": n} a geo point (the filter grammar's forms);
// any other object is nested fields, an array a list. The server checks the
// limits (ValidateMetadata); `depth` only bounds the recursion here.
absl::Status JsonToValue(const json& j, const std::string& where, int depth, v1::Value* v) {
  if (depth > db::kMaxMetadataDepth + 1) {
    return absl::InvalidArgumentError(absl::StrCat("metadata '", where, "': nested too deeply"));
  }
  if (j.is_string()) {
    v->set_string_value(j.get<std::string>());
  } else if (j.is_boolean()) {
    v->set_bool_value(j.get<bool>());
  } else if (j.is_number_integer()) {
    if (!FitsInt64(j)) {
      return absl::InvalidArgumentError(
          absl::StrCat("metadata '", where, "': integer out of int64 range"));
    }
    v->set_int_value(j.get<int64_t>());
  } else if (j.is_number()) {
    v->set_double_value(j.get<double>());
  } else if (j.is_array()) {
    auto* list = v->mutable_list_value();
    for (size_t i = 0; i < j.size(); ++i) {
      RETURN_IF_ERROR(
          JsonToValue(j[i], absl::StrCat(where, "[", i, "]"), depth + 1, list->add_values()));
    }
  } else if (j.is_object() && j.size() == 1 && j.contains("datetime") &&
             j["datetime"].is_string()) {
    absl::StatusOr<db::DateTime> t = db::ParseDateTime(j["datetime"].get<std::string>());
    if (!t.ok()) {
      return absl::InvalidArgumentError(
          absl::StrCat("metadata '", where, "': ", t.status().message()));
    }
    v->set_datetime_micros(t->micros);
  } else if (j.is_object() && j.size() == 2 && j.contains("lat") && j.contains("lon") &&
             j["lat"].is_number() && j["lon"].is_number()) {
    v->mutable_geo_value()->set_lat(j["lat"].get<double>());
    v->mutable_geo_value()->set_lon(j["lon"].get<double>());
  } else if (j.is_object()) {
    auto* fields = v->mutable_object_value()->mutable_fields();
    for (auto it = j.begin(); it != j.end(); ++it) {
      RETURN_IF_ERROR(JsonToValue(*it, absl::StrCat(where, ".", it.key()), depth + 1,
                                  &(*fields)[it.key()]));
    }
  } else {
    return absl::InvalidArgumentError(absl::StrCat("metadata '", where, "': unsupported type"));
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status JsonToMetadata(const json& j, google::protobuf::Map<std::string, v1::Value>* out) {
  if (!j.is_object()) return absl::InvalidArgumentError("\"metadata\" must be an object");
  for (auto it = j.begin(); it != j.end(); ++it) {
    v1::Value v;
    RETURN_IF_ERROR(JsonToValue(*it, it.key(), 0, &v));
    (*out)[it.key()] = std::move(v);
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
