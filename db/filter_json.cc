// ParseFilterJson: the JSON form of db::Filter (see filter.h).
#include <algorithm>
#include <nlohmann/json.hpp>

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "db/filter.h"

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
    default:
      return Bad(path, absl::StrCat("expected a string, number or bool, got ", j.type_name()));
  }
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
    if (key == "in") {
      if (!value.is_array()) return Bad(here, "expected an array");
      std::vector<Value> values;
      for (size_t i = 0; i < value.size(); ++i) {
        ASSIGN_OR_RETURN(Value v, ToValue(value[i], absl::StrCat(here, "[", i, "]")));
        values.push_back(std::move(v));
      }
      ops.push_back(Filter::In(field, std::move(values)));
    } else if (key == "exists") {
      if (!value.is_boolean()) return Bad(here, "expected true or false");
      Filter e = Filter::Exists(field);
      ops.push_back(value.get<bool>() ? std::move(e) : Filter::Not(std::move(e)));
    } else {
      static constexpr std::string_view kOps[] = {"eq", "ne", "lt", "lte", "gt", "gte"};
      if (std::find(std::begin(kOps), std::end(kOps), key) == std::end(kOps)) {
        return Bad(here, absl::StrCat("unknown operator '", key,
                                      "' (expected eq, ne, lt, lte, gt, gte, in, exists)"));
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
