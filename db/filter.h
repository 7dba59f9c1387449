#pragma once
// Metadata filter AST: Eq, Ne, Lt/Le/Gt/Ge, In, Exists, And/Or/Not,
// ContainsAny/ContainsAll, GeoRadius, GeoBox.
//
// Semantics (documented contract; the API exposes it):
// - A field is a name or a dotted path into nested objects ("author.name";
//   db::FindPath: a top-level key equal to the whole path wins).
// - Integers and doubles compare numerically with each other; strings compare
//   bytewise; datetimes compare with datetimes (as instants); bools only for
//   Eq/Ne/In/Contains*. A comparison with a missing field or a value of
//   another type (an object, a geo point, a string against a number, ...) is
//   false for Eq, Lt, Le, Gt, Ge, In and Contains*.
// - Arrays: a comparison (Eq, Lt, Le, Gt, Ge) matches an array field when any
//   element matches it, as in Elasticsearch and Qdrant; so [1, 5] matches both
//   lt 2 and gt 4. In and ContainsAny match when any element equals any
//   listed value; ContainsAll when every listed value equals some element. A
//   scalar field acts as an array of one element for all of them. Several
//   operators on one field test the elements each on its own: [1, 5.5]
//   matches gt 1 and lt 5 together (no one element lies in (1, 5)).
// - Ne(f, v) is exactly Not(Eq(f, v)): it matches documents lacking `f`, and
//   an array field none of whose elements equals v.
// - GeoRadius(f, center, meters): f is a geo point within `meters` of center
//   (haversine on a sphere of db::kEarthRadiusMeters; the boundary counts).
//   GeoBox(f, top_left, bottom_right): f is a geo point with
//   bottom_right.lat <= lat <= top_left.lat and top_left.lon <= lon <=
//   bottom_right.lon; a box whose top_left.lon > bottom_right.lon crosses the
//   antimeridian (lon >= top_left.lon or lon <= bottom_right.lon).
// - And/Or need at least one child; nesting depth is capped at kMaxFilterDepth.
// A Filter is an immutable value; Matches is thread-safe.

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "db/metadata.h"

namespace neodb::db {

inline constexpr int kMaxFilterDepth = 32;
inline constexpr size_t kMaxFilterInValues = 1024;
inline constexpr size_t kMaxFilterNodes = 4096;

class Filter {
 public:
  enum class Op {
    kEq,
    kNe,
    kLt,
    kLe,
    kGt,
    kGe,
    kIn,
    kExists,
    kAnd,
    kOr,
    kNot,
    kContainsAny,
    kContainsAll,
    kGeoRadius,
    kGeoBox,
  };

  static Filter Eq(std::string field, Value value);
  static Filter Ne(std::string field, Value value);
  static Filter Lt(std::string field, Value value);
  static Filter Le(std::string field, Value value);
  static Filter Gt(std::string field, Value value);
  static Filter Ge(std::string field, Value value);
  static Filter In(std::string field, std::vector<Value> values);
  static Filter Exists(std::string field);
  static Filter And(std::vector<Filter> children);
  static Filter Or(std::vector<Filter> children);
  static Filter Not(Filter child);
  static Filter ContainsAny(std::string field, std::vector<Value> values);
  static Filter ContainsAll(std::string field, std::vector<Value> values);
  static Filter GeoRadius(std::string field, GeoPoint center, double meters);
  static Filter GeoBox(std::string field, GeoPoint top_left, GeoPoint bottom_right);

  // INVALID_ARGUMENT naming the problem and where it is ("and[1].geo_radius.
  // meters: must be > 0"): empty field name, a range over a bool, an operand
  // that is not a string, number, bool or datetime (or a geo point for the
  // geo ops), an empty or mixed-type In/Contains list (int and double may
  // mix), a geo point out of range, a radius not > 0, a box upside down, an
  // empty And/Or, depth over kMaxFilterDepth, more than kMaxFilterNodes
  // nodes, NaN.
  absl::Status Validate() const;
  // REQUIRES: Validate() is OK (an invalid filter never matches sensibly).
  bool Matches(const Metadata& metadata) const;

  Op op() const { return op_; }
  const std::string& field() const { return field_; }
  const std::vector<Value>& values() const { return values_; }
  const std::vector<Filter>& children() const { return children_; }
  // Compact JSON-like rendering for logs and error messages.
  std::string DebugString() const;

 private:
  Filter(Op op, std::string field, std::vector<Value> values, std::vector<Filter> children);
  absl::Status ValidateAt(const std::string& path, int depth, size_t* nodes) const;
  absl::Status ValidateLeaf(const std::string& path) const;

  Op op_;
  std::string field_;
  // One for comparisons, many for In/Contains*; {center, meters} for
  // GeoRadius, {top_left, bottom_right} for GeoBox.
  std::vector<Value> values_;
  std::vector<Filter> children_;  // And/Or/Not
};

// Parses the JSON form used by the CLI and the API and validates it:
//   {"field":"year","gte":2020}          ops: eq ne lt lte gt gte in exists
//   {"field":"year","gte":2020,"lt":2024} several ops on one field = and
//   {"field":"tag","in":["a","b"]}        {"field":"tag","exists":true|false}
//   {"field":"tags","contains_any":["a","b"]}   also contains_all
//   {"field":"author.name","eq":"Ada"}   a dotted path into nested objects
//   {"field":"published","gte":{"datetime":"2024-05-01T00:00:00Z"}}
//   {"field":"loc","geo_radius":{"lat":52.5,"lon":13.4,"meters":1000}}
//   {"field":"loc","geo_bbox":{"top_left":{"lat":53,"lon":13},
//                              "bottom_right":{"lat":52,"lon":14}}}
//   {"and":[...]} {"or":[...]} {"not":{...}}
// JSON integers become int64, other numbers double; a datetime operand is an
// object {"datetime": RFC 3339 string} (db/metadata_types.h), anywhere a
// value goes. Any malformed input is INVALID_ARGUMENT naming the problem and
// its path (e.g. "and[1].in", "and[0].geo_radius.meters").
absl::StatusOr<Filter> ParseFilterJson(std::string_view json);

}  // namespace neodb::db
