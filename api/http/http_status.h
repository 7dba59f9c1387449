#pragma once
// The one table from a status code (absl and gRPC share them,
// google.rpc.Code) to an HTTP status, and the JSON error body every HTTP
// error of neodb carries:
//   {"error": {"code": 404, "status": "NOT_FOUND", "message": "..."}}
// The table is the usual one (google.rpc.Code's comments, grpc-gateway):
// INVALID_ARGUMENT, FAILED_PRECONDITION, OUT_OF_RANGE 400; UNAUTHENTICATED
// 401; PERMISSION_DENIED 403; NOT_FOUND 404; ALREADY_EXISTS, ABORTED 409;
// RESOURCE_EXHAUSTED 429; CANCELLED 499; UNIMPLEMENTED 501; UNAVAILABLE 503;
// DEADLINE_EXCEEDED 504; UNKNOWN, INTERNAL, DATA_LOSS 500.

#include <string>

#include "absl/status/status.h"

namespace neodb::api {

int HttpStatusFor(absl::StatusCode code);

// The error body for `status` (not OK), as JSON text. `http_code` (when not
// 0) is the code the body names, for the statuses the HTTP layer itself
// answers with (413: the body is over the limit) that the table cannot give.
std::string ErrorJson(const absl::Status& status, int http_code = 0);

}  // namespace neodb::api
