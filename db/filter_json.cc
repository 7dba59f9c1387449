// ParseFilterJson: the JSON form of db::Filter (see filter.h).
#include <algorithm>
#include <nlohmann/json.hpp>

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "db/filter.h"
#include "db/metadata_types.h"

namespace neodb::db {
namespace {

using Json = nlohmann::json;

constexpr size_t kMaxFilterJsonBytes = 256 * 1024;

absl::Status Bad(const std::string& path, std::string_view what) {
  return absl::InvalidArgumentError(
      absl::StrCat("malformed filter", path.empty() ? "" : " at ", path, ": ", std::string(what)));
}

absl::StatusOr<Value> ToValue(const Json& j, const std::string& path) {
  switch (j.type()) {
    case Json::value_t::string:
      return Value(j.get<std::string>());
    case Json::value_t::boolean:
      return Value(j.get<bool>());
    case Json::value_t::number_integer:
      return Value(j.get<int64_t>());
    case Json::value_t::number_unsigned: {
      uint64_t u = j.get<uint64_t>();
      if (u > static_cast<uint64_t>(INT64_MAX)) return Bad(path, "integer out of int64 range");
      return Value(static_cast<int64_t>(u));
    }
    case Json::value_t::number_float:
      return Value(j.get<double>());
    case Json::value_t::object:
      if (j.size() == 1 && j.contains("datetime")) {
        const Json& t = j.at("datetime");
        if (!t.is_string()) return Bad(path + ".datetime", "expected an RFC 3339 string");
        absl::StatusOr<DateTime> d = ParseDateTime(t.get<std::string>());
        if (!d.ok()) return Bad(path + ".datetime", std::string(d.status().message()));
        return Value(*d);
      }
      [[fallthrough]];
    default:
      return Bad(path, absl::StrCat("expected a string, number or bool (or {\"datetime\": "
                                    "RFC 3339 string}), got ",
                                    j.type_name()));
  }
}

absl::StatusOr<double> Number(const Json& j, const std::string& path) {
  if (!j.is_number()) return Bad(path, absl::StrCat("expected a number, got ", j.type_name()));
  return j.get<double>();
}

// {"lat": number, "lon": number}; the ranges are Filter::Validate's.
absl::StatusOr<GeoPoint> ToGeoPoint(const Json& j, const std::string& path) {
  if (!j.is_object()) return Bad(path, absl::StrCat("expected {\"lat\",\"lon\"}, got ",
                                                    j.type_name()));
  for (const auto& [key, value] : j.items()) {
    if (key != "lat" && key != "lon") return Bad(path, absl::StrCat("unknown key '", key, "'"));
  }
  if (!j.contains("lat") || !j.contains("lon")) return Bad(path, "needs 'lat' and 'lon'");
  GeoPoint p;
  ASSIGN_OR_RETURN(p.lat, Number(j.at("lat"), path + ".lat"));
  ASSIGN_OR_RETURN(p.lon, Number(j.at("lon"), path + ".lon"));
  return p;
}

absl::StatusOr<Filter> GeoRadius(const std::string& field, const Json& j,
                                 const std::string& path) {
  if (!j.is_object()) return Bad(path, "expected {\"lat\",\"lon\",\"meters\"}");
  for (const auto& [key, value] : j.items()) {
    if (key != "lat" && key != "lon" && key != "meters") {
      return Bad(path, absl::StrCat("unknown key '", key, "'"));
    }
  }
  if (!j.contains("lat") || !j.contains("lon") || !j.contains("meters")) {
    return Bad(path, "needs 'lat', 'lon' and 'meters'");
  }
  GeoPoint center;
  ASSIGN_OR_RETURN(center.lat, Number(j.at("lat"), path + ".lat"));
  ASSIGN_OR_RETURN(center.lon, Number(j.at("lon"), path + ".lon"));
  ASSIGN_OR_RETURN(double meters, Number(j.at("meters"), path + ".meters"));
  return Filter::GeoRadius(field, center, meters);
}

absl::StatusOr<Filter> GeoBox(const std::string& field, const Json& j, const std::string& path) {
  if (!j.is_object()) return Bad(path, "expected {\"top_left\",\"bottom_right\"}");
  for (const auto& [key, value] : j.items()) {
    if (key != "top_left" && key != "bottom_right") {
      return Bad(path, absl::StrCat("unknown key '", key, "'"));
    }
  }
  if (!j.contains("top_left") || !j.contains("bottom_right")) {
    return Bad(path, "needs 'top_left' and 'bottom_right'");
  }
  ASSIGN_OR_RETURN(GeoPoint top_left, ToGeoPoint(j.at("top_left"), path + ".top_left"));
  ASSIGN_OR_RETURN(GeoPoint bottom_right,
                   ToGeoPoint(j.at("bottom_right"), path + ".bottom_right"));
  return Filter::GeoBox(field, top_left, bottom_right);
}

absl::StatusOr<Filter> ParseNode(const Json& j, const std::string& path, int depth) {
  if (depth > kMaxFilterDepth) {
    return Bad(path, absl::StrCat("nested deeper than ", kMaxFilterDepth, " levels"));
  }
  if (!j.is_object()) return Bad(path, absl::StrCat("expected an object, got ", j.type_name()));
  if (j.empty()) return Bad(path, "empty object");
  if (j.contains("and") || j.contains("or")) {
    const char* op = j.contains("and") ? "and" : "or";
    if (j.size() != 1) return Bad(path, absl::StrCat("'", op, "' must be the only key"));
    const Json& list = j.at(op);
    std::string here = path.empty() ? op : absl::StrCat(path, ".", op);
    if (!list.is_array()) return Bad(here, "expected an array");
    if (list.empty()) return Bad(here, "needs at least one operand");
    std::vector<Filter> children;
    for (size_t i = 0; i < list.size(); ++i) {
      ASSIGN_OR_RETURN(Filter c, ParseNode(list[i], absl::StrCat(here, "[", i, "]"), depth + 1));
      children.push_back(std::move(c));
    }
    return op[0] == 'a' ? Filter::And(std::move(children)) : Filter::Or(std::move(children));
  }
  if (j.contains("not")) {
    if (j.size() != 1) return Bad(path, "'not' must be the only key");
    std::string here = path.empty() ? "not" : absl::StrCat(path, ".not");
    ASSIGN_OR_RETURN(Filter c, ParseNode(j.at("not"), here, depth + 1));
    return Filter::Not(std::move(c));
  }
  if (!j.contains("field")) {
    return Bad(path, "expected 'field' with an operator, or 'and'/'or'/'not'");
  }
  const Json& field_json = j.at("field");
  if (!field_json.is_string() || field_json.get<std::string>().empty()) {
    return Bad(path, "'field' must be a non-empty string");
  }
  std::string field = field_json.get<std::string>();
  std::vector<Filter> ops;
  for (const auto& [key, value] : j.items()) {
    if (key == "field") continue;
    std::string here = absl::StrCat(path.empty() ? "" : path + ".", key);
    if (key == "in" || key == "contains_any" || key == "contains_all") {
      if (!value.is_array()) return Bad(here, "expected an array");
      if (value.size() > kMaxFilterInValues) {
        return Bad(here, absl::StrCat("more than ", kMaxFilterInValues, " values"));
      }
      std::vector<Value> values;
      for (size_t i = 0; i < value.size(); ++i) {
        ASSIGN_OR_RETURN(Value v, ToValue(value[i], absl::StrCat(here, "[", i, "]")));
        values.push_back(std::move(v));
      }
      ops.push_back(key == "in"             ? Filter::In(field, std::move(values))
                    : key == "contains_any" ? Filter::ContainsAny(field, std::move(values))
                                            : Filter::ContainsAll(field, std::move(values)));
    } else if (key == "geo_radius") {
      ASSIGN_OR_RETURN(Filter f, GeoRadius(field, value, here));
      ops.push_back(std::move(f));
    } else if (key == "geo_bbox") {
      ASSIGN_OR_RETURN(Filter f, GeoBox(field, value, here));
      ops.push_back(std::move(f));
    } else if (key == "exists") {
      if (!value.is_boolean()) return Bad(here, "expected true or false");
      Filter e = Filter::Exists(field);
      ops.push_back(value.get<bool>() ? std::move(e) : Filter::Not(std::move(e)));
    } else {
      static constexpr std::string_view kOps[] = {"eq", "ne", "lt", "lte", "gt", "gte"};
      if (std::find(std::begin(kOps), std::end(kOps), key) == std::end(kOps)) {
        return Bad(here, absl::StrCat("unknown operator '", key,
                                      "' (expected eq, ne, lt, lte, gt, gte, in, exists, ",
                                      "contains_any, contains_all, geo_radius, geo_bbox)"));
      }
      ASSIGN_OR_RETURN(Value v, ToValue(value, here));
      if (key == "eq") {
        ops.push_back(Filter::Eq(field, std::move(v)));
      } else if (key == "ne") {
        ops.push_back(Filter::Ne(field, std::move(v)));
      } else if (key == "lt") {
        ops.push_back(Filter::Lt(field, std::move(v)));
      } else if (key == "lte") {
        ops.push_back(Filter::Le(field, std::move(v)));
      } else if (key == "gt") {
        ops.push_back(Filter::Gt(field, std::move(v)));
      } else {
        ops.push_back(Filter::Ge(field, std::move(v)));
      }
    }
  }
  if (ops.empty()) return Bad(path, absl::StrCat("field '", field, "' has no operator"));
  if (ops.size() == 1) return std::move(ops[0]);
  return Filter::And(std::move(ops));
}

}  // namespace

absl::StatusOr<Filter> ParseFilterJson(std::string_view text) {
  if (text.size() > kMaxFilterJsonBytes) {
    return Bad("", absl::StrCat("longer than ", kMaxFilterJsonBytes, " bytes"));
  }
  // nlohmann's parser recurses per nesting level: reject absurd nesting before
  // parsing so hostile input cannot exhaust the stack.
  int nesting = 0;
  bool in_string = false, escaped = false;
  for (char c : text) {
    if (in_string) {
      if (escaped) {
        escaped = false;
      } else if (c == '\\') {
        escaped = true;
      } else if (c == '"') {
        in_string = false;
      }
      continue;
    }
    if (c == '"') in_string = true;
    if (c == '{' || c == '[') {
      if (++nesting > 4 * kMaxFilterDepth) return Bad("", "nested too deeply");
    }
    if (c == '}' || c == ']') --nesting;
  }
  Json j = Json::parse(text.begin(), text.end(), /*cb=*/nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) return Bad("", "not valid JSON");
  absl::StatusOr<Filter> filter = [&]() -> absl::StatusOr<Filter> {
    try {
      return ParseNode(j, "", 1);
    } catch (const std::exception& e) {  // nlohmann type errors: adapter boundary
      return Bad("", e.what());
    }
  }();
  if (!filter.ok()) return filter.status();
  RETURN_IF_ERROR(filter->Validate());
  return filter;
}

}  // namespace neodb::db
