#pragma once
// Metadata filter AST: Eq, Ne, Lt/Le/Gt/Ge, In, Exists, And/Or/Not.
//
// Semantics (documented contract; the API exposes it):
// - Integers and doubles compare numerically with each other; strings compare
//   bytewise; bools only for Eq/Ne/In. A comparison with a missing field or a
//   value of another type is false for Eq, Lt, Le, Gt, Ge and In.
// - Ne(f, v) is exactly Not(Eq(f, v)): it matches documents lacking `f`.
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
  enum class Op { kEq, kNe, kLt, kLe, kGt, kGe, kIn, kExists, kAnd, kOr, kNot };

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

  // INVALID_ARGUMENT naming the problem: empty field name, a range over a
  // bool, an empty or mixed-type In list (int and double may mix), an empty
  // And/Or, depth over kMaxFilterDepth, more than kMaxFilterNodes nodes, NaN.
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
  absl::Status ValidateAt(int depth, size_t* nodes) const;

  Op op_;
  std::string field_;
  std::vector<Value> values_;     // one for comparisons, many for In
  std::vector<Filter> children_;  // And/Or/Not
};

// Parses the JSON form used by the CLI and the API and validates it:
//   {"field":"year","gte":2020}          ops: eq ne lt lte gt gte in exists
//   {"field":"year","gte":2020,"lt":2024} several ops on one field = and
//   {"field":"tag","in":["a","b"]}        {"field":"tag","exists":true|false}
//   {"and":[...]} {"or":[...]} {"not":{...}}
// JSON integers become int64, other numbers double. Any malformed input is
// INVALID_ARGUMENT naming the problem (and its path, e.g. "and[1].in").
absl::StatusOr<Filter> ParseFilterJson(std::string_view json);

}  // namespace neodb::db
