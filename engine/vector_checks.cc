#include "engine/vector_checks.h"

#include <cmath>

#include "absl/strings/str_cat.h"

namespace neodb::engine {

absl::Status CheckVector(const std::string& what, std::span<const float> v, uint32_t dimension,
                         const std::string& collection) {
  if (v.size() != dimension) {
    return absl::InvalidArgumentError(absl::StrCat(what, " has ", v.size(), " values; collection '",
                                                   collection, "' has dimension ", dimension));
  }
  for (size_t i = 0; i < v.size(); ++i) {
    if (!std::isfinite(v[i])) {
      return absl::InvalidArgumentError(
          absl::StrCat(what, " holds a non-finite value (", v[i], ") at position ", i));
    }
  }
  return absl::OkStatus();
}

absl::Status CheckStorableVector(const std::string& what, std::span<const float> v,
                                 index::Metric metric) {
  if (metric != index::Metric::kCosine) return absl::OkStatus();
  // The index normalises in float: the squared norm must be a positive float.
  float squared = 0;
  for (float x : v) squared += x * x;
  if (squared > 0 && std::isfinite(squared)) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrCat(
      what, squared == 0 ? " is all zeros (or too small)" : "'s norm overflows a float",
      "; a cosine collection needs a vector whose direction it can compute"));
}

}  // namespace neodb::engine
