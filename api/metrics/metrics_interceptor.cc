#include "api/metrics/metrics_interceptor.h"

#include <chrono>
#include <string>

namespace neodb::api {
namespace {

class MetricsInterceptor final : public grpc::experimental::Interceptor {
 public:
  MetricsInterceptor(RequestMetrics* metrics, const char* method)
      : metrics_(metrics), method_(method ? method : ""), start_(Clock::now()) {}

  void Intercept(grpc::experimental::InterceptorBatchMethods* methods) override {
    using grpc::experimental::InterceptionHookPoints;
    if (methods->QueryInterceptionHookPoint(InterceptionHookPoints::PRE_SEND_STATUS)) {
      const double seconds = std::chrono::duration<double>(Clock::now() - start_).count();
      metrics_->Record(method_, StatusCodeName(methods->GetSendStatus().error_code()), seconds);
    }
    methods->Proceed();
  }

 private:
  using Clock = std::chrono::steady_clock;
  RequestMetrics* metrics_;
  std::string method_;
  Clock::time_point start_;
};

}  // namespace

grpc::experimental::Interceptor* MetricsInterceptorFactory::CreateServerInterceptor(
    grpc::experimental::ServerRpcInfo* info) {
  return new MetricsInterceptor(metrics_, info->method());
}

}  // namespace neodb::api
