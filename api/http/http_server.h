#pragma once
// HttpServer: neodb's one HTTP server, on cpp-httplib (README, "HTTP and
// JSON", says why that library). What it serves depends on its options:
//   GET  /metrics                    Prometheus text (when `metrics` is set)
//   GET  /healthz                    {"status":"SERVING"} while it runs
//   POST /v1/rpc/<Service>/<Method>  every unary RPC as JSON (json_rpc.h)
//   POST /v1/embeddings              OpenAI's embeddings (openai_embeddings.h)
//   GET  /openapi.json               the OpenAPI 3 document of the routes above
//   GET  /, /console/<file>          the web console (console.h), a page that
//                                    calls the JSON API from the browser
// (the last four when `rpc` is set). Anything else is 404. Errors carry
// http_status.h's JSON body.
//
// Requests run on a pool of `threads` threads (cpp-httplib's thread pool; a
// keep-alive connection holds one while it is open, up to 5 s idle). Bodies
// over max_body_bytes are refused with 413 before a handler runs. With
// tls_cert_file and tls_key_file it serves HTTPS (cpp-httplib's SSLServer on
// OpenSSL, the certificate and key gRPC uses); without TLS and with `rpc` set,
// a non-loopback address is refused unless `insecure` (API keys would cross
// the network in clear), as for gRPC.
//
// Thread-safe: the callbacks run on the pool's threads, concurrently.

#include <functional>
#include <memory>
#include <string>
#include <thread>

#include "absl/status/statusor.h"
#include "api/http/json_rpc.h"
#include "api/metrics/request_metrics.h"

namespace httplib {
class Server;
}

namespace neodb::api {

struct HttpServerOptions {
  // host:port (IPv4, [IPv6] or localhost); port 0 picks a free one (port()).
  std::string listen = "127.0.0.1:0";
  // Threads that run requests. Default: 8.
  int threads = 8;
  // Largest request body; larger ones get 413. Default: 32 MiB (gRPC's
  // max_message_bytes).
  size_t max_body_bytes = size_t{32} << 20;
  // Renders GET /metrics; unset: no /metrics.
  std::function<std::string()> metrics = nullptr;
  // The JSON API (not owned; must outlive the server); null: none.
  const JsonRpc* rpc = nullptr;
  // Counts and times every JSON API and /v1/embeddings call, as the gRPC
  // server does its calls, labelled transport="http" (not owned); null: none.
  // Calls to a method that does not exist are not counted (their names
  // would be whatever a client sent).
  RequestMetrics* request_metrics = nullptr;
  // Allows a non-loopback address for the JSON API without TLS. Default: false.
  bool insecure = false;
  // PEM files. Both set: HTTPS; one alone is INVALID_ARGUMENT. With
  // tls_client_ca_file, clients must present a certificate it signed (as
  // gRPC's --tls-client-ca). Default: none (plain HTTP).
  std::string tls_cert_file = "";
  std::string tls_key_file = "";
  std::string tls_client_ca_file = "";
};

class HttpServer {
 public:
  // Binds (UNAVAILABLE when the address is taken: the port is not shared)
  // and starts serving; INVALID_ARGUMENT for a bad address or TLS files that
  // do not load, FAILED_PRECONDITION for the JSON API off loopback without TLS
  // or `insecure`.
  static absl::StatusOr<std::unique_ptr<HttpServer>> Start(HttpServerOptions options);
  // Stops accepting, lets running requests finish, joins.
  ~HttpServer();

  int port() const { return port_; }
  // "https" with TLS, else "http".
  const char* scheme() const { return tls() ? "https" : "http"; }

 private:
  HttpServer() = default;
  bool tls() const { return !options_.tls_cert_file.empty(); }
  HttpServerOptions options_;
  std::unique_ptr<httplib::Server> server_;
  std::thread thread_;
  int port_ = 0;
};

}  // namespace neodb::api
