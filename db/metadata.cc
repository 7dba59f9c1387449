#include "db/metadata.h"

#include <cmath>

#include "absl/strings/str_cat.h"

namespace neodb::db {

std::string_view ValueTypeName(const Value& v) {
  switch (v.index()) {
    case 0:
      return "string";
    case 1:
      return "int";
    case 2:
      return "double";
    default:
      return "bool";
  }
}

absl::Status ValidateMetadata(const Metadata& metadata) {
  if (metadata.size() > kMaxMetadataFields) {
    return absl::InvalidArgumentError(absl::StrCat("metadata has ", metadata.size(),
                                                   " fields; the limit is ", kMaxMetadataFields));
  }
  for (const auto& [key, value] : metadata) {
    if (key.empty()) return absl::InvalidArgumentError("metadata field name is empty");
    if (key.size() > kMaxMetadataKeyBytes) {
      return absl::InvalidArgumentError(absl::StrCat("metadata field name of ", key.size(),
                                                     " bytes exceeds ", kMaxMetadataKeyBytes));
    }
    if (const auto* s = std::get_if<std::string>(&value);
        s != nullptr && s->size() > kMaxMetadataStringBytes) {
      return absl::InvalidArgumentError(absl::StrCat("metadata field '", key, "' string of ",
                                                     s->size(), " bytes exceeds ",
                                                     kMaxMetadataStringBytes));
    }
    if (const auto* d = std::get_if<double>(&value); d != nullptr && !std::isfinite(*d)) {
      return absl::InvalidArgumentError(
          absl::StrCat("metadata field '", key, "' is not a finite number"));
    }
  }
  return absl::OkStatus();
}

}  // namespace neodb::db
