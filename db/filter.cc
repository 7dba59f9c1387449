#include "db/filter.h"

#include <cmath>
#include <optional>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace neodb::db {
namespace {

bool IsNumeric(const Value& v) { return v.index() == 1 || v.index() == 2; }

// Three-way comparison of two values of compatible types; nullopt when the
// types are incomparable (string vs number, bool vs anything else).
std::optional<int> Compare(const Value& a, const Value& b) {
  if (IsNumeric(a) && IsNumeric(b)) {
    if (a.index() == 1 && b.index() == 1) {
      int64_t x = std::get<int64_t>(a), y = std::get<int64_t>(b);
      return x < y ? -1 : (x > y ? 1 : 0);
    }
    // Mixed int/double: compare as long double so 2^53+1 vs 2^53 stays exact
    // enough for practical ids and years.
    long double x = a.index() == 1 ? static_cast<long double>(std::get<int64_t>(a))
                                   : static_cast<long double>(std::get<double>(a));
    long double y = b.index() == 1 ? static_cast<long double>(std::get<int64_t>(b))
                                   : static_cast<long double>(std::get<double>(b));
    return x < y ? -1 : (x > y ? 1 : 0);
  }
  if (a.index() != b.index()) return std::nullopt;
  if (a.index() == 0) {
    int c = std::get<std::string>(a).compare(std::get<std::string>(b));
    return c < 0 ? -1 : (c > 0 ? 1 : 0);
  }
  bool x = std::get<bool>(a), y = std::get<bool>(b);
  return x == y ? 0 : (x ? 1 : -1);
}

std::string ValueString(const Value& v) {
  switch (v.index()) {
    case 0:
      return absl::StrCat("\"", std::get<std::string>(v), "\"");
    case 1:
      return absl::StrCat(std::get<int64_t>(v));
    case 2:
      return absl::StrCat(std::get<double>(v));
    default:
      return std::get<bool>(v) ? "true" : "false";
  }
}

const char* OpName(Filter::Op op) {
  switch (op) {
    case Filter::Op::kEq:
      return "eq";
    case Filter::Op::kNe:
      return "ne";
    case Filter::Op::kLt:
      return "lt";
    case Filter::Op::kLe:
      return "lte";
    case Filter::Op::kGt:
      return "gt";
    case Filter::Op::kGe:
      return "gte";
    case Filter::Op::kIn:
      return "in";
    case Filter::Op::kExists:
      return "exists";
    case Filter::Op::kAnd:
      return "and";
    case Filter::Op::kOr:
      return "or";
    case Filter::Op::kNot:
      return "not";
  }
  return "?";
}

}  // namespace

Filter::Filter(Op op, std::string field, std::vector<Value> values, std::vector<Filter> children)
    : op_(op),
      field_(std::move(field)),
      values_(std::move(values)),
      children_(std::move(children)) {}

Filter Filter::Eq(std::string f, Value v) {
  return Filter(Op::kEq, std::move(f), {std::move(v)}, {});
}
Filter Filter::Ne(std::string f, Value v) {
  return Filter(Op::kNe, std::move(f), {std::move(v)}, {});
}
Filter Filter::Lt(std::string f, Value v) {
  return Filter(Op::kLt, std::move(f), {std::move(v)}, {});
}
Filter Filter::Le(std::string f, Value v) {
  return Filter(Op::kLe, std::move(f), {std::move(v)}, {});
}
Filter Filter::Gt(std::string f, Value v) {
  return Filter(Op::kGt, std::move(f), {std::move(v)}, {});
}
Filter Filter::Ge(std::string f, Value v) {
  return Filter(Op::kGe, std::move(f), {std::move(v)}, {});
}
Filter Filter::In(std::string f, std::vector<Value> vs) {
  return Filter(Op::kIn, std::move(f), std::move(vs), {});
}
Filter Filter::Exists(std::string f) { return Filter(Op::kExists, std::move(f), {}, {}); }
Filter Filter::And(std::vector<Filter> c) { return Filter(Op::kAnd, "", {}, std::move(c)); }
Filter Filter::Or(std::vector<Filter> c) { return Filter(Op::kOr, "", {}, std::move(c)); }
Filter Filter::Not(Filter c) {
  std::vector<Filter> children;
  children.push_back(std::move(c));
  return Filter(Op::kNot, "", {}, std::move(children));
}

absl::Status Filter::Validate() const {
  size_t nodes = 0;
  return ValidateAt(1, &nodes);
}

absl::Status Filter::ValidateAt(int depth, size_t* nodes) const {
  if (depth > kMaxFilterDepth) {
    return absl::InvalidArgumentError(
        absl::StrCat("filter is nested deeper than ", kMaxFilterDepth, " levels"));
  }
  if (++*nodes > kMaxFilterNodes) {
    return absl::InvalidArgumentError(
        absl::StrCat("filter has more than ", kMaxFilterNodes, " nodes"));
  }
  switch (op_) {
    case Op::kAnd:
    case Op::kOr:
    case Op::kNot:
      if (children_.empty()) {
        return absl::InvalidArgumentError(
            absl::StrCat("'", OpName(op_), "' needs at least one operand"));
      }
      if (op_ == Op::kNot && children_.size() != 1) {
        return absl::InvalidArgumentError("'not' takes exactly one operand");
      }
      for (const Filter& c : children_) {
        if (auto s = c.ValidateAt(depth + 1, nodes); !s.ok()) return s;
      }
      return absl::OkStatus();
    default:
      break;
  }
  if (field_.empty()) {
    return absl::InvalidArgumentError(absl::StrCat("'", OpName(op_), "' has an empty field name"));
  }
  if (field_.size() > kMaxMetadataKeyBytes) {
    return absl::InvalidArgumentError("filter field name is too long");
  }
  for (const Value& v : values_) {
    if (v.index() == 2 && std::isnan(std::get<double>(v))) {
      return absl::InvalidArgumentError(
          absl::StrCat("field '", field_, "': NaN is not comparable"));
    }
  }
  switch (op_) {
    case Op::kExists:
      if (!values_.empty()) return absl::InvalidArgumentError("'exists' takes no value");
      return absl::OkStatus();
    case Op::kIn: {
      if (values_.empty()) {
        return absl::InvalidArgumentError(absl::StrCat("field '", field_, "': 'in' list is empty"));
      }
      if (values_.size() > kMaxFilterInValues) {
        return absl::InvalidArgumentError(absl::StrCat(
            "field '", field_, "': 'in' list has more than ", kMaxFilterInValues, " values"));
      }
      for (const Value& v : values_) {
        bool same = IsNumeric(v) ? IsNumeric(values_[0]) : v.index() == values_[0].index();
        if (!same) {
          return absl::InvalidArgumentError(absl::StrCat("field '", field_, "': 'in' list mixes ",
                                                         std::string(ValueTypeName(values_[0])),
                                                         " and ", std::string(ValueTypeName(v))));
        }
      }
      return absl::OkStatus();
    }
    default:
      if (values_.size() != 1) {
        return absl::InvalidArgumentError(
            absl::StrCat("'", OpName(op_), "' takes exactly one value"));
      }
      if (op_ != Op::kEq && op_ != Op::kNe && values_[0].index() == 3) {
        return absl::InvalidArgumentError(absl::StrCat("field '", field_, "': range operator '",
                                                       OpName(op_), "' cannot compare a bool"));
      }
      return absl::OkStatus();
  }
}

bool Filter::Matches(const Metadata& metadata) const {
  switch (op_) {
    case Op::kAnd:
      for (const Filter& c : children_) {
        if (!c.Matches(metadata)) return false;
      }
      return true;
    case Op::kOr:
      for (const Filter& c : children_) {
        if (c.Matches(metadata)) return true;
      }
      return false;
    case Op::kNot:
      return !children_[0].Matches(metadata);
    default:
      break;
  }
  auto it = metadata.find(field_);
  if (op_ == Op::kExists) return it != metadata.end();
  if (op_ == Op::kNe) {
    if (it == metadata.end()) return true;
    auto c = Compare(it->second, values_[0]);
    return !(c && *c == 0);
  }
  if (it == metadata.end()) return false;
  const Value& have = it->second;
  if (op_ == Op::kIn) {
    for (const Value& v : values_) {
      auto c = Compare(have, v);
      if (c && *c == 0) return true;
    }
    return false;
  }
  auto c = Compare(have, values_[0]);
  if (!c) return false;
  switch (op_) {
    case Op::kEq:
      return *c == 0;
    case Op::kLt:
      return *c < 0;
    case Op::kLe:
      return *c <= 0;
    case Op::kGt:
      return *c > 0;
    case Op::kGe:
      return *c >= 0;
    default:
      return false;
  }
}

std::string Filter::DebugString() const {
  switch (op_) {
    case Op::kAnd:
    case Op::kOr: {
      std::vector<std::string> parts;
      for (const Filter& c : children_) parts.push_back(c.DebugString());
      return absl::StrCat("{\"", OpName(op_), "\":[", absl::StrJoin(parts, ","), "]}");
    }
    case Op::kNot:
      return absl::StrCat("{\"not\":", children_[0].DebugString(), "}");
    case Op::kExists:
      return absl::StrCat("{\"field\":\"", field_, "\",\"exists\":true}");
    case Op::kIn: {
      std::vector<std::string> parts;
      for (const Value& v : values_) parts.push_back(ValueString(v));
      return absl::StrCat("{\"field\":\"", field_, "\",\"in\":[", absl::StrJoin(parts, ","), "]}");
    }
    default:
      return absl::StrCat("{\"field\":\"", field_, "\",\"", OpName(op_),
                          "\":", ValueString(values_[0]), "}");
  }
}

}  // namespace neodb::db
