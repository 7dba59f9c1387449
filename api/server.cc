#include "api/server.h"

#include "absl/strings/str_cat.h"
#include "api/auth/auth_processor.h"
#include "api/metrics/metrics_interceptor.h"
#include "api/request_parse_errors.h"
#include "grpcpp/ext/proto_server_reflection_plugin.h"
#include "grpcpp/health_check_service_interface.h"
#include "spdlog/spdlog.h"

namespace neodb::api {

absl::StatusOr<std::unique_ptr<Server>> Server::Start(engine::Database* db,
                                                      const ServerOptions& options) {
  if (options.threads < 1) return absl::InvalidArgumentError("threads must be at least 1");
  if (options.max_queued_calls < 1) {
    return absl::InvalidArgumentError(absl::StrCat(
        "max queued calls is ", options.max_queued_calls, "; it must be at least 1"));
  }
  StreamGateOptions streams = options.streams;
  if (streams.max_open == 0) streams.max_open = 64;
  if (streams.max_open < 1) {
    return absl::InvalidArgumentError(
        absl::StrCat("max open streams is ", streams.max_open, "; it must be at least 1"));
  }
  if (streams.max_open_per_key < 0 || streams.max_open_per_key > streams.max_open) {
    return absl::InvalidArgumentError(
        absl::StrCat("max streams per key is ", streams.max_open_per_key, "; it must be in 0..",
                     streams.max_open, " (the max open streams; 0 = half of it)"));
  }
  const int stream_workers =
      options.stream_workers > 0 ? options.stream_workers : std::max(2, options.threads / 2);
  if (streams.idle_timeout <= absl::ZeroDuration()) {
    return absl::InvalidArgumentError("the stream idle timeout must be positive");
  }
  if (auto s = options.http2.Check(); !s.ok()) return s;
  grpc::EnableDefaultHealthCheckService(true);
  grpc::reflection::InitProtoReflectionServerBuilderPlugin();
  std::shared_ptr<grpc::AuthMetadataProcessor> auth;
  if (options.keys) {
    ApiKeyAuthProcessor::RejectHook hook;
    if (RequestMetrics* m = options.metrics) {
      hook = [m](absl::string_view method, grpc::StatusCode code) {
        m->RecordRefused(method, StatusCodeName(code));
      };
    }
    auth = std::make_shared<ApiKeyAuthProcessor>(options.keys, std::move(hook));
  }
  auto creds = MakeServerCredentials(options.security, options.listen, std::move(auth));
  if (!creds.ok()) return creds.status();
  if (!creds->warning.empty()) spdlog::warn("{}", creds->warning);
  std::unique_ptr<Server> s(new Server());
  s->streams_ = std::make_unique<StreamGate>(streams);
  // The streams bound their own tasks (StreamGate; one batch per stream).
  s->stream_workers_ = std::make_unique<WorkerPool>(stream_workers, /*max_queued=*/0);
  s->unary_workers_ = std::make_unique<WorkerPool>(
      options.threads, static_cast<size_t>(options.max_queued_calls));
  if (options.cluster != nullptr) {
    absl::StatusOr<std::unique_ptr<PeerChannels>> peers = PeerChannels::Make(options.security);
    if (!peers.ok()) return peers.status();
    s->peers_ = std::move(*peers);
  }
  s->services_ = MakeServices(db, options.limits, s->streams_.get(), s->stream_workers_.get(),
                              s->unary_workers_.get(), options.cluster, s->peers_.get());
  grpc::ServerBuilder builder;
  builder.AddListeningPort(options.listen, creds->credentials, &s->port_);
  // gRPC sets SO_REUSEPORT by default: a second server on a busy port would
  // start and share its requests. Refuse instead.
  builder.AddChannelArgument(GRPC_ARG_ALLOW_REUSEPORT, 0);
  // gRPC 1.51 (Debian) predates the fixes for CVE-2023-44487 (HTTP/2 rapid
  // reset): the per-connection limits (streams at once, ping policy, header
  // size; http2_limits.h) bound what one connection can start; in all, the
  // unary workers' queue bounds the unary calls (a reset call leaves it
  // unrun), and the StreamGate the ingest streams (README, "Limits under
  // hostile load").
  options.http2.Apply(builder);
  builder.SetMaxReceiveMessageSize(options.max_message_bytes);
  builder.SetMaxSendMessageSize(options.max_message_bytes);
  // Every neodb.v1 method is a callback method (services.h); gRPC's sync
  // server is left with reflection, on a small pool (two threads per
  // completion queue are needed). gRPC's sync server keeps at most
  // MAX_POLLERS (default 2) threads waiting for calls and starts and ends
  // threads around that, and every thread start/exit left memory behind
  // (bench/README.md, issue 49): every thread of the pool may wait instead.
  constexpr int kSyncThreads = 4;
  grpc::ResourceQuota quota("neodb");
  quota.SetMaxThreads(kSyncThreads);
  builder.SetResourceQuota(quota);
  builder.SetSyncServerOption(grpc::ServerBuilder::SyncServerOption::MAX_POLLERS,
                              kSyncThreads - 2);
  for (auto& svc : s->services_) builder.RegisterService(svc.get());
  // Unparsable requests first: the metrics then count the status sent.
  InstallRequestParseErrorCapture();
  std::vector<std::unique_ptr<grpc::experimental::ServerInterceptorFactoryInterface>> icpt;
  icpt.push_back(std::make_unique<RequestParseErrorInterceptorFactory>());
  if (options.metrics) {
    icpt.push_back(std::make_unique<MetricsInterceptorFactory>(options.metrics));
  }
  builder.experimental().SetInterceptorCreators(std::move(icpt));
  s->server_ = builder.BuildAndStart();
  if (!s->server_ || s->port_ == 0) {
    return absl::UnavailableError(
        absl::StrCat("cannot listen on ", options.listen, " (is another server using it?)"));
  }
  return s;
}

Server::~Server() {
  if (server_) Shutdown(absl::ZeroDuration());
}

void Server::Shutdown(absl::Duration grace) {
  if (!server_) return;
  if (auto* health = server_->GetHealthCheckService()) health->Shutdown();
  server_->Shutdown(absl::ToChronoTime(absl::Now() + grace));
  // Returns once every callback call is done: a unary call is done only
  // after its work returned on a worker (unary_reactor.h).
  server_->Wait();
  // Every stream was cancelled by now; the last reactors may still be
  // finishing on a worker. They use the gate and the workers until OnDone.
  streams_->WaitUntilNoneOpen();
  server_.reset();
}

void Server::Wait() {
  if (server_) server_->Wait();
}

}  // namespace neodb::api
