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
  // The sync server runs the unary handlers on max(2, threads) threads
  // (plus gRPC's own two; see the quota below). The ingest streams run on
  // the callback API and hold none of them (services.h).
  const int handler_threads = std::max(2, options.threads);
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
  s->stream_workers_ = std::make_unique<StreamWorkers>(stream_workers);
  if (options.cluster != nullptr) {
    absl::StatusOr<std::unique_ptr<PeerChannels>> peers = PeerChannels::Make(options.security);
    if (!peers.ok()) return peers.status();
    s->peers_ = std::move(*peers);
  }
  s->services_ = MakeServices(db, options.limits, s->streams_.get(), s->stream_workers_.get(),
                              options.cluster, s->peers_.get());
  grpc::ServerBuilder builder;
  builder.AddListeningPort(options.listen, creds->credentials, &s->port_);
  // gRPC sets SO_REUSEPORT by default: a second server on a busy port would
  // start and share its requests. Refuse instead.
  builder.AddChannelArgument(GRPC_ARG_ALLOW_REUSEPORT, 0);
  // gRPC 1.51 (Debian) predates the fixes for CVE-2023-44487 (HTTP/2 rapid
  // reset): the per-connection limits (streams at once, ping policy, header
  // size; http2_limits.h) bound what one connection can start; in all, the
  // thread quota below bounds the unary handlers, and the StreamGate and its
  // workers the ingest streams (README, "Limits under hostile load").
  options.http2.Apply(builder);
  builder.SetMaxReceiveMessageSize(options.max_message_bytes);
  builder.SetMaxSendMessageSize(options.max_message_bytes);
  grpc::ResourceQuota quota("neodb");
  // Sync server (the unary calls): at least two threads per completion
  // queue are needed. The callback methods run on gRPC's own callback
  // threads, which only hand work to stream_workers_.
  quota.SetMaxThreads(handler_threads + 2);
  builder.SetResourceQuota(quota);
  // gRPC's sync server keeps at most MAX_POLLERS (default 2) threads waiting for
  // calls: a thread that finishes a call while two others wait exits, and a
  // call taken while none waits starts a new one. Handlers that block (a
  // near-text call waits for the encoder) thus created and ended ~2 threads a
  // call, and every thread start/exit left memory behind: RSS grew ~2.3 KiB a
  // call without bound (bench/README.md, issue 49). Letting every handler
  // thread wait keeps the pool's threads alive instead.
  builder.SetSyncServerOption(grpc::ServerBuilder::SyncServerOption::MAX_POLLERS,
                              handler_threads);
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
