#pragma once
// Typed document metadata: a map from field name to a value, which is one of
//   string, int (int64), double, bool            scalars
//   Array    a list of scalars (strings, ints, doubles, bools; may mix)
//   Object   nested fields, addressed in filters by a dotted path
//            ("author.name"); keys never contain '.'
//   DateTime a UTC instant, microseconds since the Unix epoch (RFC 3339 in
//            the JSON and API forms: db/metadata_types.h)
//   GeoPoint latitude/longitude in degrees
// Integers and doubles compare numerically with each other in filters
// (db/filter.h); datetimes compare only with datetimes; every other
// cross-type comparison is "not equal".

#include <compare>
#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "absl/status/status.h"

namespace neodb::db {

struct Array;
struct Object;
// UTC microseconds since 1970-01-01T00:00:00Z. A type of its own so that a
// datetime never compares equal to (or orders against) an integer.
struct DateTime {
  int64_t micros = 0;
  auto operator<=>(const DateTime&) const = default;
};
// Degrees. Valid: lat in [-90, 90], lon in [-180, 180] (ValidateMetadata).
struct GeoPoint {
  double lat = 0;
  double lon = 0;
  auto operator<=>(const GeoPoint&) const = default;
};

// The alternatives' order is part of the on-disk format (db/codec.cc stores
// the index); append only.
using Value = std::variant<std::string, int64_t, double, bool, Array, Object, DateTime, GeoPoint>;

// Ordered so that serialisation and debug output are deterministic.
using Metadata = std::map<std::string, Value, std::less<>>;

struct Array {
  std::vector<Value> items;  // scalars only (ValidateMetadata)
};
struct Object {
  Metadata fields;
};
// Total orders (what std::map<Value, ...> keys need): element-wise.
bool operator==(const Array& a, const Array& b);
bool operator<(const Array& a, const Array& b);
bool operator==(const Object& a, const Object& b);
bool operator<(const Object& a, const Object& b);

// Limits applied to every document written through Store (hostile input).
inline constexpr size_t kMaxMetadataFields = 256;  // keys at all levels together
inline constexpr size_t kMaxMetadataKeyBytes = 256;
inline constexpr size_t kMaxMetadataStringBytes = 64 * 1024;
inline constexpr size_t kMaxMetadataArrayItems = 1024;       // per array
inline constexpr size_t kMaxMetadataTotalItems = 16 * 1024;  // array items, all arrays
inline constexpr size_t kMaxMetadataTotalStringBytes = 1024 * 1024;
// Object nesting: a top-level object is depth 1; "a.b.c" with c a scalar
// needs depth 2.
inline constexpr int kMaxMetadataDepth = 8;
// 0001-01-01T00:00:00Z and 9999-12-31T23:59:59.999999Z: RFC 3339's years.
inline constexpr int64_t kMinDateTimeMicros = -62135596800LL * 1000000;
inline constexpr int64_t kMaxDateTimeMicros = 253402300799LL * 1000000 + 999999;

// Human-readable type name of `v`: "string", "int", "double", "bool",
// "array", "object", "datetime" or "geo".
std::string_view ValueTypeName(const Value& v);
inline bool IsScalar(const Value& v) { return v.index() <= 3; }

// The value at `path` in `metadata`: the top-level key equal to the whole
// path if there is one (keys written before nesting existed may hold a '.'),
// else the dotted path walked through nested objects. nullptr when missing.
const Value* FindPath(const Metadata& metadata, std::string_view path);

// OK when every key is 1..kMaxMetadataKeyBytes bytes without '.', there are
// at most kMaxMetadataFields keys at all levels, objects nest at most
// kMaxMetadataDepth deep, arrays hold at most kMaxMetadataArrayItems
// scalars (kMaxMetadataTotalItems together), strings are at most
// kMaxMetadataStringBytes (kMaxMetadataTotalStringBytes together), doubles
// are finite, datetimes lie in [kMinDateTimeMicros, kMaxDateTimeMicros] and
// geo points in range. INVALID_ARGUMENT naming the field's path otherwise.
absl::Status ValidateMetadata(const Metadata& metadata);

}  // namespace neodb::db
