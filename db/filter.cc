#include "db/filter.h"

#include <cmath>
#include <optional>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/status_macros.h"
#include "db/metadata_types.h"

namespace neodb::db {
namespace {

bool IsNumeric(const Value& v) { return v.index() == 1 || v.index() == 2; }

// Three-way comparison of two values of compatible types; nullopt when the
// types are incomparable (string vs number, bool vs anything else, a
// datetime vs anything but a datetime, arrays, objects and geo points).
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
  if (const auto* s = std::get_if<std::string>(&a)) {
    int c = s->compare(std::get<std::string>(b));
    return c < 0 ? -1 : (c > 0 ? 1 : 0);
  }
  if (const auto* x = std::get_if<bool>(&a)) {
    bool y = std::get<bool>(b);
    return *x == y ? 0 : (*x ? 1 : -1);
  }
  if (const auto* x = std::get_if<DateTime>(&a)) {
    int64_t y = std::get<DateTime>(b).micros;
    return x->micros < y ? -1 : (x->micros > y ? 1 : 0);
  }
  return std::nullopt;
}

bool Equal(const Value& a, const Value& b) {
  auto c = Compare(a, b);
  return c && *c == 0;
}

// Whether `pred` holds for `have` or, when it is an array, any element.
template <typename Pred>
bool AnyElement(const Value& have, Pred pred) {
  if (const auto* a = std::get_if<Array>(&have)) {
    for (const Value& item : a->items) {
      if (pred(item)) return true;
    }
    return false;
  }
  return pred(have);
}

bool InBox(const GeoPoint& p, const GeoPoint& top_left, const GeoPoint& bottom_right) {
  if (p.lat > top_left.lat || p.lat < bottom_right.lat) return false;
  if (top_left.lon <= bottom_right.lon) return p.lon >= top_left.lon && p.lon <= bottom_right.lon;
  return p.lon >= top_left.lon || p.lon <= bottom_right.lon;  // across the antimeridian
}

std::string ValueString(const Value& v) {
  switch (v.index()) {
    case 0:
      return absl::StrCat("\"", std::get<std::string>(v), "\"");
    case 1:
      return absl::StrCat(std::get<int64_t>(v));
    case 2:
      return absl::StrCat(std::get<double>(v));
    case 3:
      return std::get<bool>(v) ? "true" : "false";
    case 6:
      return absl::StrCat("{\"datetime\":\"", FormatDateTime(std::get<DateTime>(v)), "\"}");
    case 7:
      return absl::StrCat("{\"lat\":", std::get<GeoPoint>(v).lat,
                          ",\"lon\":", std::get<GeoPoint>(v).lon, "}");
    default:
      return absl::StrCat("<", std::string(ValueTypeName(v)), ">");
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
    case Filter::Op::kContainsAny:
      return "contains_any";
    case Filter::Op::kContainsAll:
      return "contains_all";
    case Filter::Op::kGeoRadius:
      return "geo_radius";
    case Filter::Op::kGeoBox:
      return "geo_bbox";
  }
  return "?";
}

std::string Join(const std::string& path, std::string_view part) {
  return path.empty() ? std::string(part) : absl::StrCat(path, ".", std::string(part));
}

absl::Status Bad(const std::string& path, std::string_view what) {
  return absl::InvalidArgumentError(absl::StrCat(path, ": ", std::string(what)));
}

absl::Status CheckGeoPoint(const std::string& path, const Value& v) {
  const auto* g = std::get_if<GeoPoint>(&v);
  if (g == nullptr) return Bad(path, "expected a geo point");
  if (!(g->lat >= -90 && g->lat <= 90)) return Bad(path + ".lat", "must be in [-90, 90]");
  if (!(g->lon >= -180 && g->lon <= 180)) return Bad(path + ".lon", "must be in [-180, 180]");
  return absl::OkStatus();
}

// A comparison/list operand: a scalar or a datetime, not NaN.
absl::Status CheckOperand(const std::string& path, const Value& v) {
  if (!IsScalar(v) && !std::holds_alternative<DateTime>(v)) {
    return Bad(path, absl::StrCat("expected a string, number, bool or datetime, not ",
                                  std::string(ValueTypeName(v))));
  }
  if (v.index() == 2 && std::isnan(std::get<double>(v))) return Bad(path, "NaN is not comparable");
  if (const auto* t = std::get_if<DateTime>(&v);
      t != nullptr && (t->micros < kMinDateTimeMicros || t->micros > kMaxDateTimeMicros)) {
    return Bad(path, "datetime outside years 0001..9999");
  }
  return absl::OkStatus();
}

// The largest filter field: a nested path of maximal keys.
constexpr size_t kMaxFieldBytes = (kMaxMetadataKeyBytes + 1) * (kMaxMetadataDepth + 1);

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
Filter Filter::ContainsAny(std::string f, std::vector<Value> vs) {
  return Filter(Op::kContainsAny, std::move(f), std::move(vs), {});
}
Filter Filter::ContainsAll(std::string f, std::vector<Value> vs) {
  return Filter(Op::kContainsAll, std::move(f), std::move(vs), {});
}
Filter Filter::GeoRadius(std::string f, GeoPoint center, double meters) {
  return Filter(Op::kGeoRadius, std::move(f), {Value(center), Value(meters)}, {});
}
Filter Filter::GeoBox(std::string f, GeoPoint top_left, GeoPoint bottom_right) {
  return Filter(Op::kGeoBox, std::move(f), {Value(top_left), Value(bottom_right)}, {});
}

absl::Status Filter::Validate() const {
  size_t nodes = 0;
  absl::Status s = ValidateAt("", 1, &nodes);
  if (s.ok()) return s;
  return absl::InvalidArgumentError(absl::StrCat("filter ", s.message()));
}

absl::Status Filter::ValidateAt(const std::string& path, int depth, size_t* nodes) const {
  const std::string here = Join(path, OpName(op_));
  if (depth > kMaxFilterDepth) {
    return Bad(here, absl::StrCat("filter is nested deeper than ", kMaxFilterDepth, " levels"));
  }
  if (++*nodes > kMaxFilterNodes) {
    return Bad(here, absl::StrCat("filter has more than ", kMaxFilterNodes, " nodes"));
  }
  switch (op_) {
    case Op::kAnd:
    case Op::kOr:
    case Op::kNot:
      if (children_.empty()) {
        return Bad(here, absl::StrCat("'", OpName(op_), "' needs at least one operand"));
      }
      if (op_ == Op::kNot && children_.size() != 1) {
        return Bad(here, "'not' takes exactly one operand");
      }
      for (size_t i = 0; i < children_.size(); ++i) {
        const std::string child = op_ == Op::kNot ? here : absl::StrCat(here, "[", i, "]");
        if (auto s = children_[i].ValidateAt(child, depth + 1, nodes); !s.ok()) return s;
      }
      return absl::OkStatus();
    default:
      return ValidateLeaf(here);
  }
}

absl::Status Filter::ValidateLeaf(const std::string& here) const {
  if (field_.empty()) return Bad(here, absl::StrCat("'", OpName(op_), "' has an empty field name"));
  if (field_.size() > kMaxFieldBytes) return Bad(here, "filter field name is too long");
  const std::string on = absl::StrCat("field '", field_, "': ");
  switch (op_) {
    case Op::kExists:
      if (!values_.empty()) return Bad(here, "'exists' takes no value");
      return absl::OkStatus();
    case Op::kIn:
    case Op::kContainsAny:
    case Op::kContainsAll: {
      if (values_.empty()) {
        return Bad(here, absl::StrCat(on, "'", OpName(op_), "' list is empty"));
      }
      if (values_.size() > kMaxFilterInValues) {
        return Bad(here, absl::StrCat(on, "'", OpName(op_), "' list has more than ",
                                      kMaxFilterInValues, " values"));
      }
      for (size_t i = 0; i < values_.size(); ++i) {
        const Value& v = values_[i];
        if (auto s = CheckOperand(absl::StrCat(here, "[", i, "]"), v); !s.ok()) return s;
        bool same = IsNumeric(v) ? IsNumeric(values_[0]) : v.index() == values_[0].index();
        if (!same) {
          return Bad(here, absl::StrCat(on, "'", OpName(op_), "' list mixes ",
                                        std::string(ValueTypeName(values_[0])), " and ",
                                        std::string(ValueTypeName(v))));
        }
      }
      return absl::OkStatus();
    }
    case Op::kGeoRadius: {
      if (values_.size() != 2) return Bad(here, "'geo_radius' takes a center and a radius");
      RETURN_IF_ERROR(CheckGeoPoint(here, values_[0]));
      const auto* m = std::get_if<double>(&values_[1]);
      if (m == nullptr || !std::isfinite(*m) || !(*m > 0)) {
        return Bad(here + ".meters", "must be > 0");
      }
      return absl::OkStatus();
    }
    case Op::kGeoBox: {
      if (values_.size() != 2) return Bad(here, "'geo_bbox' takes top_left and bottom_right");
      RETURN_IF_ERROR(CheckGeoPoint(here + ".top_left", values_[0]));
      RETURN_IF_ERROR(CheckGeoPoint(here + ".bottom_right", values_[1]));
      if (std::get<GeoPoint>(values_[0]).lat < std::get<GeoPoint>(values_[1]).lat) {
        return Bad(here, "top_left.lat must be >= bottom_right.lat");
      }
      return absl::OkStatus();
    }
    default:
      if (values_.size() != 1) {
        return Bad(here, absl::StrCat("'", OpName(op_), "' takes exactly one value"));
      }
      RETURN_IF_ERROR(CheckOperand(here, values_[0]));
      if (op_ != Op::kEq && op_ != Op::kNe && values_[0].index() == 3) {
        return Bad(here, absl::StrCat(on, "range operator '", OpName(op_),
                                      "' cannot compare a bool"));
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
  const Value* have = FindPath(metadata, field_);
  if (op_ == Op::kExists) return have != nullptr;
  if (op_ == Op::kNe) {
    return have == nullptr ||
           !AnyElement(*have, [&](const Value& e) { return Equal(e, values_[0]); });
  }
  if (have == nullptr) return false;
  switch (op_) {
    case Op::kIn:
    case Op::kContainsAny:
      return AnyElement(*have, [&](const Value& e) {
        for (const Value& v : values_) {
          if (Equal(e, v)) return true;
        }
        return false;
      });
    case Op::kContainsAll:
      for (const Value& v : values_) {
        if (!AnyElement(*have, [&](const Value& e) { return Equal(e, v); })) return false;
      }
      return true;
    case Op::kGeoRadius: {
      const auto* p = std::get_if<GeoPoint>(have);
      return p != nullptr &&
             GeoDistanceMeters(*p, std::get<GeoPoint>(values_[0])) <= std::get<double>(values_[1]);
    }
    case Op::kGeoBox: {
      const auto* p = std::get_if<GeoPoint>(have);
      return p != nullptr &&
             InBox(*p, std::get<GeoPoint>(values_[0]), std::get<GeoPoint>(values_[1]));
    }
    default:
      break;
  }
  const Op op = op_;
  const Value& want = values_[0];
  return AnyElement(*have, [&](const Value& e) {
    auto c = Compare(e, want);
    if (!c) return false;
    switch (op) {
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
  });
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
    case Op::kIn:
    case Op::kContainsAny:
    case Op::kContainsAll: {
      std::vector<std::string> parts;
      for (const Value& v : values_) parts.push_back(ValueString(v));
      return absl::StrCat("{\"field\":\"", field_, "\",\"", OpName(op_), "\":[",
                          absl::StrJoin(parts, ","), "]}");
    }
    case Op::kGeoRadius: {
      const GeoPoint& c = std::get<GeoPoint>(values_[0]);
      return absl::StrCat("{\"field\":\"", field_, "\",\"geo_radius\":{\"lat\":", c.lat,
                          ",\"lon\":", c.lon, ",\"meters\":", std::get<double>(values_[1]), "}}");
    }
    case Op::kGeoBox:
      return absl::StrCat("{\"field\":\"", field_, "\",\"geo_bbox\":{\"top_left\":",
                          ValueString(values_[0]), ",\"bottom_right\":", ValueString(values_[1]),
                          "}}");
    default:
      return absl::StrCat("{\"field\":\"", field_, "\",\"", OpName(op_),
                          "\":", ValueString(values_[0]), "}");
  }
}

}  // namespace neodb::db
