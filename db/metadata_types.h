#pragma once
// Text forms of the metadata types that JSON has no literal for: RFC 3339
// datetimes and the great-circle distance geo filters use. Shared by the
// filter grammar (db/filter_json.cc), the API (api/convert.cc) and the CLI.

#include <cstdint>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "db/metadata.h"

namespace neodb::db {

// Parses an RFC 3339 timestamp, "2024-05-01T00:00:00Z" or
// "2024-05-01T02:00:00.5+02:00" ('T'/'t'/' ' and 'Z'/'z' accepted; a
// fraction of up to 9 digits, truncated to microseconds), into UTC. Years
// 0001..9999; no leap second (":60"). INVALID_ARGUMENT describing the
// problem otherwise.
absl::StatusOr<DateTime> ParseDateTime(std::string_view text);

// "YYYY-MM-DDTHH:MM:SS[.ffffff]Z" (the fraction only when non-zero, six
// digits). REQUIRES: t within [kMinDateTimeMicros, kMaxDateTimeMicros].
std::string FormatDateTime(DateTime t);

// Mean Earth radius (IUGG), the sphere geo distances are measured on.
inline constexpr double kEarthRadiusMeters = 6371008.8;

// Haversine great-circle distance between two points, in meters.
double GeoDistanceMeters(const GeoPoint& a, const GeoPoint& b);

}  // namespace neodb::db
