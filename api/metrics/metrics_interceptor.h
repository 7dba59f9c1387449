#pragma once
// A gRPC server interceptor that times every call that reaches a handler and
// records its method and final status in RequestMetrics. Calls the API-key
// check refuses never get here; the processor counts those.

#include "api/metrics/request_metrics.h"
#include "grpcpp/support/server_interceptor.h"

namespace neodb::api {

class MetricsInterceptorFactory final
    : public grpc::experimental::ServerInterceptorFactoryInterface {
 public:
  // `metrics` is not owned and must outlive the server.
  explicit MetricsInterceptorFactory(RequestMetrics* metrics) : metrics_(metrics) {}
  grpc::experimental::Interceptor* CreateServerInterceptor(
      grpc::experimental::ServerRpcInfo* info) override;

 private:
  RequestMetrics* metrics_;
};

}  // namespace neodb::api
