#pragma once
// Typed document metadata: a map from field name to a string, integer, double
// or bool. Integers and doubles compare numerically with each other in filters
// (db/filter.h); every other cross-type comparison is "not equal".

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <variant>

#include "absl/status/status.h"

namespace neodb::db {

// The alternatives' order is part of the on-disk format (db/codec.cc stores
// the index); append only.
using Value = std::variant<std::string, int64_t, double, bool>;

// Ordered so that serialisation and debug output are deterministic.
using Metadata = std::map<std::string, Value, std::less<>>;

// Limits applied to every document written through Store (hostile input).
inline constexpr size_t kMaxMetadataFields = 256;
inline constexpr size_t kMaxMetadataKeyBytes = 256;
inline constexpr size_t kMaxMetadataStringBytes = 64 * 1024;

// Human-readable type name of `v`: "string", "int", "double" or "bool".
std::string_view ValueTypeName(const Value& v);

// OK when every key is 1..kMaxMetadataKeyBytes bytes, there are at most
// kMaxMetadataFields fields, strings are at most kMaxMetadataStringBytes and
// doubles are finite. INVALID_ARGUMENT naming the field otherwise.
absl::Status ValidateMetadata(const Metadata& metadata);

}  // namespace neodb::db
