#pragma once
// Distance metrics. Every index reports scores where HIGHER IS BETTER:
//   cosine: cosine similarity in [-1, 1] (vectors normalised on add and query,
//           then inner product);
//   ip:     raw inner product;
//   l2:     NEGATED squared Euclidean distance (0 is a perfect match).

#include <string_view>

#include "absl/status/statusor.h"

namespace neodb::index {

enum class Metric { kCosine, kInnerProduct, kL2 };

// "cosine" | "ip" | "l2"; INVALID_ARGUMENT otherwise.
absl::StatusOr<Metric> ParseMetric(std::string_view name);
std::string_view MetricName(Metric metric);

}  // namespace neodb::index
