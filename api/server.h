#pragma once
// Server: the gRPC server around a Database — neodb.v1 services, the standard
// health service (grpc.health.v1) and server reflection, so stock tools
// (grpcurl, grpc_health_probe) work.
//
// Thread-safety: Shutdown may be called from any thread, once.

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "api/auth/api_keys.h"
#include "api/auth/transport_security.h"
#include "api/http2_limits.h"
#include "api/peer_channels.h"
#include "engine/database.h"
#include "api/metrics/request_metrics.h"
#include "api/services.h"
#include "api/stream_gate.h"
#include "grpcpp/grpcpp.h"

namespace neodb::api {

struct ServerOptions {
  // host:port; port 0 picks a free one (see Server::port()).
  std::string listen = "127.0.0.1:0";
  // Worker threads of the unary calls (unary_reactor.h): the calls whose
  // work runs at once; the others wait in their queue. Default: 16.
  int threads = 16;
  // Unary calls that may wait for a worker at once; one more is answered
  // RESOURCE_EXHAUSTED ("server busy"). A waiting call costs its request
  // message and a few hundred bytes; one cancelled while it waits leaves
  // the queue at once. Default: 1024.
  int max_queued_calls = 1024;
  // Largest request message; larger ones are refused by gRPC with
  // RESOURCE_EXHAUSTED before they reach a handler. Default: 32 MiB.
  int max_message_bytes = 32 << 20;
  ServiceLimits limits;
  // Ingest streams: server-wide and per-key caps, idle timeout
  // (stream_gate.h). An open stream holds no thread, so the caps are not
  // tied to `threads`. streams.max_open 0 picks 64; max_open_per_key 0
  // picks half of max_open. Default: 64 streams, 32 per key, 60 s idle.
  StreamGateOptions streams{.max_open = 0};
  // Threads that run the ingest streams' batches (worker_pool.h), apart from
  // the unary calls' workers; each stream has at most one batch queued or
  // running. 0: max(2, threads / 2).
  // Default: 0.
  int stream_workers = 0;
  // What one HTTP/2 connection may make the server do: streams at once,
  // the ping policy, header size, connection idle time and age
  // (http2_limits.h; the flood mitigations gRPC 1.51 offers, README
  // "Limits under hostile load"). Default: Http2Limits's defaults.
  Http2Limits http2;
  // TLS files and the --insecure override (transport_security.h).
  SecurityOptions security;
  // API keys every call is checked against (auth_processor.h); null serves
  // without keys, which only loopback allows unless security.insecure.
  std::shared_ptr<const KeyRing> keys;
  // Every call is counted and timed here (not owned; must outlive the
  // server). Null: no request metrics.
  RequestMetrics* metrics = nullptr;
  // This server's part in a cluster (not owned; must outlive the server).
  // Null: a server alone (sharded collections are refused).
  cluster::ClusterNode* cluster = nullptr;
};

class Server {
 public:
  // Starts serving `db` (not owned; must outlive the server). FAILED_PRECONDITION
  // for a listen address the security options do not allow (see
  // MakeServerCredentials), INVALID_ARGUMENT for bad TLS files. UNAVAILABLE when
  // the address cannot be bound, e.g. another process listens there: the
  // port is never shared (SO_REUSEPORT off), so two servers cannot split one
  // address's requests between them.
  static absl::StatusOr<std::unique_ptr<Server>> Start(engine::Database* db,
                                                       const ServerOptions& options);
  ~Server();

  int port() const { return port_; }
  const StreamGate& streams() const { return *streams_; }
  // The service objects gRPC calls; the HTTP JSON API (http/json_rpc.h)
  // calls the same ones. They live as long as the Server.
  const std::vector<std::unique_ptr<grpc::Service>>& services() const { return services_; }
  // Stops accepting calls, lets running ones finish until `grace` has
  // passed, then cancels the rest (a running call's work sees it through
  // CancelOf). Returns once every call is done: every unary call's work has
  // returned and every stream has finished.
  void Shutdown(absl::Duration grace);
  void Wait();

 private:
  Server() = default;
  std::unique_ptr<StreamGate> streams_;            // outlives services_ and server_
  std::unique_ptr<WorkerPool> stream_workers_;  // outlives services_ and server_
  std::unique_ptr<PeerChannels> peers_;         // outlives services_ and server_
  std::vector<std::unique_ptr<grpc::Service>> services_;
  // Joined before the services go (a worker may still be returning from a
  // call gRPC already counts as done); outlives server_.
  std::unique_ptr<WorkerPool> unary_workers_;
  std::unique_ptr<grpc::Server> server_;
  int port_ = 0;
};

}  // namespace neodb::api
