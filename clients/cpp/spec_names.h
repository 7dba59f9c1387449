#pragma once
// The names a user types for a collection's settings and a search's mode,
// read into the API's values on the client's side, so that a typo fails
// before the request is sent, in the server's words. The server's codecs are
// the reference (index/metric.cc, engine/embed_settings.cc,
// engine/search_params.cc, encoder/backend.cc);
// tests/clients/spec_names_test.cc holds the two to the same names, values
// and messages.

#include <string_view>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "neodb/v1/neodb.pb.h"

namespace neodb::client {

// cosine | ip | l2
absl::StatusOr<v1::Metric> MetricFromName(std::string_view name);
// mean | cls
absl::StatusOr<v1::Pooling> PoolingFromName(std::string_view name);
// error | chunk
absl::StatusOr<v1::Overflow> OverflowFromName(std::string_view name);
// The names the request carries as they are, checked only:
// vector | keyword | hybrid
absl::Status CheckSearchMode(std::string_view name);
// f32 | bf16 | int8
absl::Status CheckPrecision(std::string_view name);

}  // namespace neodb::client
