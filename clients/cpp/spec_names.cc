#include "clients/cpp/spec_names.h"

#include <string>

#include "absl/strings/str_cat.h"

namespace neodb::client {

absl::StatusOr<v1::Metric> MetricFromName(std::string_view name) {
  if (name == "cosine") return v1::METRIC_COSINE;
  if (name == "ip") return v1::METRIC_INNER_PRODUCT;
  if (name == "l2") return v1::METRIC_L2;
  return absl::InvalidArgumentError(
      absl::StrCat("unknown metric '", std::string(name), "' (expected cosine, ip or l2)"));
}

absl::StatusOr<v1::Pooling> PoolingFromName(std::string_view name) {
  if (name == "mean") return v1::POOLING_MEAN;
  if (name == "cls") return v1::POOLING_CLS;
  return absl::InvalidArgumentError(
      absl::StrCat("pooling '", std::string(name), "' is not one of mean, cls"));
}

absl::StatusOr<v1::Overflow> OverflowFromName(std::string_view name) {
  if (name == "error") return v1::OVERFLOW_ERROR;
  if (name == "chunk") return v1::OVERFLOW_CHUNK;
  return absl::InvalidArgumentError(
      absl::StrCat("overflow '", std::string(name), "' is not one of error, chunk"));
}

absl::Status CheckSearchMode(std::string_view name) {
  if (name == "vector" || name == "keyword" || name == "hybrid") return absl::OkStatus();
  return absl::InvalidArgumentError(
      absl::StrCat("mode '", std::string(name), "' is not one of vector, keyword, hybrid"));
}

absl::Status CheckPrecision(std::string_view name) {
  if (name == "f32" || name == "bf16" || name == "int8") return absl::OkStatus();
  return absl::InvalidArgumentError("precision must be f32, bf16 or int8, not '" +
                                    std::string(name) + "'");
}

}  // namespace neodb::client
