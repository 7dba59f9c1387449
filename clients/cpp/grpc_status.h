#pragma once
// A gRPC status as an absl::Status on the client's side: codes map one to one
// (both follow google.rpc.Code), the message is kept as is. The server's own
// conversions, both ways, are api/grpc_status.h; a client does not link the
// server for three lines.

#include "absl/status/status.h"
#include "grpcpp/support/status.h"

namespace neodb::client {

absl::Status FromGrpcStatus(const grpc::Status& status);

}  // namespace neodb::client
