#include "api/request_parse_errors.h"

#include <mutex>
#include <string>
#include <string_view>

#include "absl/strings/str_cat.h"
#include "google/protobuf/stubs/logging.h"
#include "grpc/grpc.h"
#include "grpcpp/server_context.h"

namespace neodb::api {
namespace {

// The field protobuf last refused to parse on this thread (empty: none).
thread_local std::string bad_utf8_field;

google::protobuf::LogHandler* previous_handler = nullptr;

// Protobuf 3.21's wording (PrintUTF8ErrorLog in wire_format_lite.cc):
//   String field 'neodb.v1.Document.id' contains invalid UTF-8 data when
//   parsing a protocol buffer. ...
constexpr std::string_view kPrefix = "String field '";
constexpr std::string_view kParsing = "' contains invalid UTF-8 data when parsing";

void CaptureHandler(google::protobuf::LogLevel level, const char* filename, int line,
                    const std::string& message) {
  std::string_view m = message;
  if (m.starts_with(kPrefix)) {
    const size_t end = m.find(kParsing, kPrefix.size());
    if (end != std::string_view::npos) {
      bad_utf8_field = std::string(m.substr(kPrefix.size(), end - kPrefix.size()));
      return;
    }
  }
  if (previous_handler != nullptr) previous_handler(level, filename, line, message);
}

class RequestParseErrorInterceptor final : public grpc::experimental::Interceptor {
 public:
  explicit RequestParseErrorInterceptor(grpc::ServerContextBase* ctx) : ctx_(ctx) {}

  void Intercept(grpc::experimental::InterceptorBatchMethods* methods) override {
    using grpc::experimental::InterceptionHookPoints;
    // A record left by a parse that no call claimed must not be blamed on
    // this call's next message.
    if (methods->QueryInterceptionHookPoint(InterceptionHookPoints::PRE_RECV_MESSAGE)) {
      bad_utf8_field.clear();
    }
    if (methods->QueryInterceptionHookPoint(InterceptionHookPoints::POST_RECV_MESSAGE) &&
        methods->GetRecvMessage() == nullptr) {
      recv_failed_ = true;
      Claim();
    }
    if (methods->QueryInterceptionHookPoint(InterceptionHookPoints::PRE_SEND_STATUS)) {
      const grpc::Status sent = methods->GetSendStatus();
      // gRPC's answer to a unary request it has no message of: INTERNAL
      // with no message from the sync server (reflection), UNIMPLEMENTED
      // with none from the callback server (every neodb.v1 method), whether
      // the message did not parse or never came (the client reset the call
      // first: a rapid reset).
      const bool unparsed = recv_failed_ && sent.error_message().empty() &&
                            (sent.error_code() == grpc::StatusCode::INTERNAL ||
                             sent.error_code() == grpc::StatusCode::UNIMPLEMENTED);
      if (!field_.empty()) {
        methods->ModifySendStatus(
            grpc::Status(grpc::StatusCode::INVALID_ARGUMENT,
                         absl::StrCat("request field ", field_, " is not valid UTF-8")));
      } else if (unparsed && ctx_ != nullptr && ctx_->c_call() != nullptr &&
                 grpc_call_failed_before_recv_message(ctx_->c_call())) {
        // No message came: the stream ended in error first (the client reset
        // it). Nobody reads this status; the metrics count the call as what
        // it was.
        methods->ModifySendStatus(grpc::Status(
            grpc::StatusCode::CANCELLED, "the call was cancelled before its request was read"));
      } else if (unparsed) {
        methods->ModifySendStatus(grpc::Status(grpc::StatusCode::INVALID_ARGUMENT,
                                               "the request message does not parse"));
      }
    }
    methods->Proceed();
  }

 private:
  // Takes this thread's record of a failed field as this call's.
  void Claim() {
    if (bad_utf8_field.empty()) return;
    if (field_.empty()) field_ = std::move(bad_utf8_field);
    bad_utf8_field.clear();
  }

  grpc::ServerContextBase* const ctx_;  // the call's
  std::string field_;  // the first field of this call that failed to parse
  bool recv_failed_ = false;
};

}  // namespace

void InstallRequestParseErrorCapture() {
  static std::once_flag once;
  std::call_once(once, [] { previous_handler = google::protobuf::SetLogHandler(&CaptureHandler); });
}

grpc::experimental::Interceptor* RequestParseErrorInterceptorFactory::CreateServerInterceptor(
    grpc::experimental::ServerRpcInfo* info) {
  return new RequestParseErrorInterceptor(info->server_context());
}

}  // namespace neodb::api
