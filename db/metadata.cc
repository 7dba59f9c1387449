#include "db/metadata.h"

#include <algorithm>
#include <cmath>

#include "absl/strings/str_cat.h"

namespace neodb::db {

bool operator==(const Array& a, const Array& b) { return a.items == b.items; }
bool operator<(const Array& a, const Array& b) { return a.items < b.items; }
bool operator==(const Object& a, const Object& b) { return a.fields == b.fields; }
bool operator<(const Object& a, const Object& b) { return a.fields < b.fields; }

std::string_view ValueTypeName(const Value& v) {
  static constexpr std::string_view kNames[] = {"string", "int",    "double",   "bool",
                                                "array",  "object", "datetime", "geo"};
  static_assert(std::size(kNames) == std::variant_size_v<Value>);
  return kNames[v.index()];
}

const Value* FindPath(const Metadata& metadata, std::string_view path) {
  if (auto it = metadata.find(path); it != metadata.end()) return &it->second;
  const Metadata* level = &metadata;
  while (true) {
    const size_t dot = path.find('.');
    if (dot == std::string_view::npos) {
      auto it = level->find(path);
      return it == level->end() ? nullptr : &it->second;
    }
    auto it = level->find(path.substr(0, dot));
    if (it == level->end()) return nullptr;
    const auto* object = std::get_if<Object>(&it->second);
    if (object == nullptr) return nullptr;
    level = &object->fields;
    path.remove_prefix(dot + 1);
  }
}

namespace {

struct Budget {
  size_t fields = 0;
  size_t items = 0;
  size_t string_bytes = 0;
};

absl::Status Bad(const std::string& path, std::string_view what) {
  return absl::InvalidArgumentError(
      absl::StrCat("metadata field '", path, "': ", std::string(what)));
}

absl::Status CheckString(const std::string& path, const std::string& s, Budget* budget) {
  if (s.size() > kMaxMetadataStringBytes) {
    return Bad(path,
               absl::StrCat("string of ", s.size(), " bytes exceeds ", kMaxMetadataStringBytes));
  }
  budget->string_bytes += s.size();
  if (budget->string_bytes > kMaxMetadataTotalStringBytes) {
    return Bad(path, absl::StrCat("metadata strings exceed ", kMaxMetadataTotalStringBytes,
                                  " bytes in all"));
  }
  return absl::OkStatus();
}

absl::Status CheckFields(const Metadata& fields, const std::string& prefix, int depth,
                         Budget* budget);

absl::Status CheckValue(const std::string& path, const Value& value, int depth,
                        Budget* budget) {
  switch (value.index()) {
    case 0:
      return CheckString(path, std::get<std::string>(value), budget);
    case 2:
      if (!std::isfinite(std::get<double>(value))) return Bad(path, "is not a finite number");
      return absl::OkStatus();
    case 4: {
      const auto& items = std::get<Array>(value).items;
      if (items.size() > kMaxMetadataArrayItems) {
        return Bad(path, absl::StrCat("array of ", items.size(), " items exceeds ",
                                      kMaxMetadataArrayItems));
      }
      budget->items += items.size();
      if (budget->items > kMaxMetadataTotalItems) {
        return Bad(path, absl::StrCat("metadata arrays exceed ", kMaxMetadataTotalItems,
                                      " items in all"));
      }
      for (size_t i = 0; i < items.size(); ++i) {
        const std::string at = absl::StrCat(path, "[", i, "]");
        if (!IsScalar(items[i])) {
          return Bad(at, absl::StrCat("an array holds strings, numbers and bools, not ",
                                      std::string(ValueTypeName(items[i]))));
        }
        if (auto s = CheckValue(at, items[i], depth, budget); !s.ok()) return s;
      }
      return absl::OkStatus();
    }
    case 5:
      if (depth >= kMaxMetadataDepth) {
        return Bad(path, absl::StrCat("objects nest deeper than ", kMaxMetadataDepth, " levels"));
      }
      return CheckFields(std::get<Object>(value).fields, path + ".", depth + 1, budget);
    case 6: {
      const int64_t t = std::get<DateTime>(value).micros;
      if (t < kMinDateTimeMicros || t > kMaxDateTimeMicros) {
        return Bad(path, "datetime outside years 0001..9999");
      }
      return absl::OkStatus();
    }
    case 7: {
      const GeoPoint& g = std::get<GeoPoint>(value);
      if (!(g.lat >= -90 && g.lat <= 90)) return Bad(path, "geo latitude must be in [-90, 90]");
      if (!(g.lon >= -180 && g.lon <= 180)) {
        return Bad(path, "geo longitude must be in [-180, 180]");
      }
      return absl::OkStatus();
    }
    default:  // int, bool
      return absl::OkStatus();
  }
}

absl::Status CheckFields(const Metadata& fields, const std::string& prefix, int depth,
                         Budget* budget) {
  for (const auto& [key, value] : fields) {
    if (++budget->fields > kMaxMetadataFields) {
      return absl::InvalidArgumentError(absl::StrCat(
          "metadata has more than ", kMaxMetadataFields, " fields (nested ones count)"));
    }
    if (key.empty()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "metadata field name is empty", prefix.empty() ? "" : " in '", prefix.empty() ? "" : prefix,
          prefix.empty() ? "" : "'"));
    }
    if (key.size() > kMaxMetadataKeyBytes) {
      return absl::InvalidArgumentError(absl::StrCat("metadata field name of ", key.size(),
                                                     " bytes exceeds ", kMaxMetadataKeyBytes));
    }
    const std::string path = prefix + key;
    if (key.find('.') != std::string::npos) {
      return Bad(path, "a field name may not contain '.' (it separates nested fields)");
    }
    if (auto s = CheckValue(path, value, depth, budget); !s.ok()) return s;
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status ValidateMetadata(const Metadata& metadata) {
  if (metadata.size() > kMaxMetadataFields) {
    return absl::InvalidArgumentError(absl::StrCat("metadata has ", metadata.size(),
                                                   " fields; the limit is ", kMaxMetadataFields));
  }
  Budget budget;
  return CheckFields(metadata, "", 0, &budget);
}

}  // namespace neodb::db
