#pragma once
// The JSON filter syntax of the CLI, turned into a neodb.v1.Filter message:
//   {"field":"year","gte":2020}            ops: eq ne lt lte gt gte in exists
//   {"field":"year","gte":2020,"lt":2024}  several ops on one field = all of them
//   {"and":[...]} {"or":[...]} {"not":{...}}
// (the same syntax as db::ParseFilterJson). JSON integers become int values,
// other numbers doubles. INVALID_ARGUMENT names the problem and its path.

#include <string_view>

#include "absl/status/statusor.h"
#include "neodb/v1/neodb.pb.h"

namespace neodb::cli {

absl::StatusOr<v1::Filter> ParseFilterJsonToProto(std::string_view json);

}  // namespace neodb::cli
