#pragma once
// The one place where absl::Status meets grpc::Status. Codes map one to one
// (both follow google.rpc.Code); the message is kept as is.

#include "absl/status/status.h"
#include "grpcpp/support/status.h"

namespace neodb::api {

grpc::Status ToGrpcStatus(const absl::Status& status);
absl::Status FromGrpcStatus(const grpc::Status& status);

}  // namespace neodb::api
