#pragma once
// Clear errors for requests that protobuf refuses to parse.
//
// A proto3 `string` field holding invalid UTF-8 (an id, a collection name, a
// metadata key) makes the generated parser fail inside gRPC, before any
// handler runs; gRPC then answers INTERNAL with an empty message, and a
// streaming Read just ends as if the client had finished. Protobuf names the
// field only in a log line, on the thread that parsed. So:
//  - InstallRequestParseErrorCapture() routes protobuf's log through a handler
//    that remembers, per thread, the last field that failed UTF-8 checking
//    while parsing (and drops that line: hostile clients must not be able to
//    fill the server's log); every other protobuf message still goes to stderr.
//  - RequestParseErrorInterceptorFactory's interceptor, at the end of each
//    call, turns a remembered field into INVALID_ARGUMENT naming it, and any
//    other unparsable unary request (INTERNAL with no message) into
//    INVALID_ARGUMENT as well. gRPC's sync server parses a call's messages on
//    the thread that then sends its status, which is what makes the per-thread
//    record belong to the call.
// Text fields are `bytes` in neodb.proto and are checked by the engine (with
// the byte offset); this covers the `string` fields.

#include "grpcpp/support/server_interceptor.h"

namespace neodb::api {

// Idempotent and thread-safe; call before the server starts.
void InstallRequestParseErrorCapture();

class RequestParseErrorInterceptorFactory final
    : public grpc::experimental::ServerInterceptorFactoryInterface {
 public:
  grpc::experimental::Interceptor* CreateServerInterceptor(
      grpc::experimental::ServerRpcInfo* info) override;
};

}  // namespace neodb::api
