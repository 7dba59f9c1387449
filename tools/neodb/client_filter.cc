#include "tools/neodb/client_filter.h"

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "nlohmann/json.hpp"

namespace neodb::cli {
namespace {

using json = nlohmann::json;

absl::StatusOr<v1::Value> ToValue(const json& j, const std::string& path) {
  v1::Value v;
  if (j.is_string())
    v.set_string_value(j.get<std::string>());
  else if (j.is_boolean())
    v.set_bool_value(j.get<bool>());
  else if (j.is_number_integer())
    v.set_int_value(j.get<int64_t>());
  else if (j.is_number())
    v.set_double_value(j.get<double>());
  else
    return absl::InvalidArgumentError(absl::StrCat(path, ": expected a string, number or bool"));
  return v;
}

absl::StatusOr<v1::Filter> Parse(const json& j, const std::string& path, int depth) {
  if (depth > 32) return absl::InvalidArgumentError(absl::StrCat(path, ": nested too deeply"));
  if (!j.is_object()) return absl::InvalidArgumentError(absl::StrCat(path, ": expected an object"));
  v1::Filter out;
  for (const char* op : {"and", "or"}) {
    if (!j.contains(op)) continue;
    if (j.size() != 1) {
      return absl::InvalidArgumentError(absl::StrCat(path, ": '", op, "' must stand alone"));
    }
    const json& list = j.at(op);
    if (!list.is_array() || list.empty()) {
      return absl::InvalidArgumentError(
          absl::StrCat(path, ".", op, ": expected a non-empty array"));
    }
    auto* l = std::string(op) == "and" ? out.mutable_all() : out.mutable_any();
    for (size_t i = 0; i < list.size(); ++i) {
      ASSIGN_OR_RETURN(*l->add_filters(),
                       Parse(list[i], absl::StrCat(path, ".", op, "[", i, "]"), depth + 1));
    }
    return out;
  }
  if (j.contains("not")) {
    if (j.size() != 1)
      return absl::InvalidArgumentError(absl::StrCat(path, ": 'not' must stand alone"));
    ASSIGN_OR_RETURN(*out.mutable_negate(), Parse(j.at("not"), path + ".not", depth + 1));
    return out;
  }
  if (!j.contains("field") || !j.at("field").is_string()) {
    return absl::InvalidArgumentError(
        absl::StrCat(path, ": expected \"field\" (a string) or and/or/not"));
  }
  const std::string field = j.at("field").get<std::string>();
  std::vector<v1::Filter> parts;
  v1::Filter::Range* range = nullptr;
  v1::Filter range_filter;
  for (auto it = j.begin(); it != j.end(); ++it) {
    const std::string& op = it.key();
    const std::string p = absl::StrCat(path, ".", op);
    if (op == "field") continue;
    v1::Filter f;
    if (op == "eq" || op == "ne") {
      f.mutable_eq()->set_field(field);
      ASSIGN_OR_RETURN(*f.mutable_eq()->mutable_value(), ToValue(*it, p));
      if (op == "ne") {
        v1::Filter n;
        *n.mutable_negate() = std::move(f);
        f = std::move(n);
      }
      parts.push_back(std::move(f));
    } else if (op == "lt" || op == "lte" || op == "gt" || op == "gte") {
      if (!range) {
        range = range_filter.mutable_range();
        range->set_field(field);
      }
      ASSIGN_OR_RETURN(v1::Value v, ToValue(*it, p));
      if (op[0] == 'l') {
        if (range->has_upper())
          return absl::InvalidArgumentError(absl::StrCat(p, ": two upper bounds"));
        *range->mutable_upper() = v;
        range->set_upper_exclusive(op == "lt");
      } else {
        if (range->has_lower())
          return absl::InvalidArgumentError(absl::StrCat(p, ": two lower bounds"));
        *range->mutable_lower() = v;
        range->set_lower_exclusive(op == "gt");
      }
    } else if (op == "in") {
      if (!it->is_array())
        return absl::InvalidArgumentError(absl::StrCat(p, ": expected an array"));
      f.mutable_in_list()->set_field(field);
      for (size_t i = 0; i < it->size(); ++i) {
        ASSIGN_OR_RETURN(*f.mutable_in_list()->add_values(),
                         ToValue((*it)[i], absl::StrCat(p, "[", i, "]")));
      }
      parts.push_back(std::move(f));
    } else if (op == "exists") {
      if (!it->is_boolean())
        return absl::InvalidArgumentError(absl::StrCat(p, ": expected true or false"));
      f.mutable_exists()->set_field(field);
      if (!it->get<bool>()) {
        v1::Filter n;
        *n.mutable_negate() = std::move(f);
        f = std::move(n);
      }
      parts.push_back(std::move(f));
    } else {
      return absl::InvalidArgumentError(absl::StrCat(path, ": unknown operator '", op, "'"));
    }
  }
  if (range) parts.push_back(std::move(range_filter));
  if (parts.empty())
    return absl::InvalidArgumentError(absl::StrCat(path, ": no operator on '", field, "'"));
  if (parts.size() == 1) return std::move(parts[0]);
  for (auto& p : parts) *out.mutable_all()->add_filters() = std::move(p);
  return out;
}

}  // namespace

absl::StatusOr<v1::Filter> ParseFilterJsonToProto(std::string_view text) {
  json j;
  try {
    j = json::parse(text.begin(), text.end());
  } catch (const json::exception& e) {
    return absl::InvalidArgumentError(absl::StrCat("filter is not valid JSON: ", e.what()));
  }
  return Parse(j, "filter", 0);
}

}  // namespace neodb::cli
