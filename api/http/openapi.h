#pragma once
// The OpenAPI 3 document of the HTTP API, generated from the descriptors of
// neodb.v1 (no second description to keep in step): a path per method
// JsonRpc serves, a schema per message as proto_json.h prints and reads it
// (proto field names; 64-bit integers as strings; bytes as text; enums by
// name), plus /v1/embeddings, /healthz and /metrics, and the bearer-key
// security scheme.

#include <string>

#include "api/http/json_rpc.h"

namespace neodb::api {

std::string OpenApiDocument(const JsonRpc& rpc);

}  // namespace neodb::api
