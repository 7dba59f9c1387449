#include "index/metric.h"

#include "absl/strings/str_cat.h"

namespace neodb::index {

absl::StatusOr<Metric> ParseMetric(std::string_view name) {
  if (name == "cosine") return Metric::kCosine;
  if (name == "ip") return Metric::kInnerProduct;
  if (name == "l2") return Metric::kL2;
  return absl::InvalidArgumentError(
      absl::StrCat("unknown metric '", std::string(name), "' (expected cosine, ip or l2)"));
}

std::string_view MetricName(Metric metric) {
  switch (metric) {
    case Metric::kCosine:
      return "cosine";
    case Metric::kInnerProduct:
      return "ip";
    case Metric::kL2:
      return "l2";
  }
  return "?";
}

}  // namespace neodb::index
