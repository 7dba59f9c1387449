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
//  - RequestParseErrorInterceptorFactory's interceptor claims the record for
//    its call right after gRPC parsed the call's message (POST_RECV_MESSAGE
//    runs on the thread that parsed, on the sync and the callback server
//    alike; a unary call's status is sent later, from a worker of ours,
//    unary_reactor.h), and at the end of the call turns a claimed field into
//    INVALID_ARGUMENT naming it, and any other unary request gRPC has no
//    message of (INTERNAL or UNIMPLEMENTED with no message) into
//    INVALID_ARGUMENT "does not parse", or CANCELLED when gRPC saw the
//    stream fail before a message came (grpc_call_failed_before_recv_message;
//    the status is never sent, but the request metrics count it). A call
//    reset before its message was read (a rapid reset) often looks to the
//    interceptor exactly like a message that does not parse (the callback
//    server answers both UNIMPLEMENTED with no message and hides the
//    difference), so the metrics count it INVALID_ARGUMENT.
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
