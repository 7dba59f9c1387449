#include "api/http/http_server.h"

#include <sys/socket.h>

#include <chrono>
#include <optional>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "api/auth/transport_security.h"
#include "api/http/console.h"
#include "api/http/http_status.h"
#include "api/http/openai_embeddings.h"
#include "api/http/openapi.h"
#include "httplib.h"
#include "nlohmann/json.hpp"

namespace neodb::api {
namespace {

constexpr char kJson[] = "application/json";

std::optional<absl::string_view> AuthorizationOf(const httplib::Request& req) {
  auto it = req.headers.find("Authorization");
  if (it == req.headers.end()) return std::nullopt;
  return absl::string_view(it->second);
}

void Reply(const HttpReply& r, httplib::Response& res) {
  res.status = r.status;
  res.set_content(r.body, kJson);
}

// The request's body, at most `limit` bytes as decoded. cpp-httplib 0.11
// enforces set_payload_max_length only on a Content-Length: a chunked body,
// or a gzip one that inflates, would be read whole into memory. So every POST
// route reads through this counting receiver, which stops at the limit. False
// when the body was refused; `res` then holds the 413 or 400 reply.
bool ReadBody(const httplib::ContentReader& reader, size_t limit, std::string* body,
              httplib::Response& res) {
  bool over = false;
  const bool ok = reader([&](const char* data, size_t n) {
    if (n > limit - body->size()) {
      over = true;
      return false;
    }
    body->append(data, n);
    return true;
  });
  if (ok) return true;
  // A Content-Length over the limit: cpp-httplib refused it and set 413.
  if (over || res.status == 413) {
    Reply({413, ErrorJson(absl::ResourceExhaustedError(absl::StrCat(
                              "the request body is over the server's limit of ", limit,
                              " bytes (gRPC's largest message); send fewer documents or texts "
                              "per call")),
                          413)},
          res);
  } else {
    Reply({400, ErrorJson(absl::InvalidArgumentError(
                    "the request body could not be read (broken chunked framing or "
                    "content encoding?)"))},
          res);
  }
  return false;
}

// The status code's name ("OK", "NOT_FOUND") of a reply, for the request
// metrics: an error body names it (http_status.h); the HTTP status alone
// would not tell INVALID_ARGUMENT from FAILED_PRECONDITION.
std::string CodeOf(const httplib::Response& res) {
  if (res.status == 200) return "OK";
  const nlohmann::json body = nlohmann::json::parse(res.body, nullptr, false);
  if (body.is_object() && body.contains("error") && body["error"].is_object() &&
      body["error"].contains("status") && body["error"]["status"].is_string()) {
    return body["error"]["status"].get<std::string>();
  }
  return "UNKNOWN";
}

// Times one call from its arrival (before its body is read) and records it
// when it goes out of scope, whichever way the handler returned.
class CallTimer {
 public:
  CallTimer(RequestMetrics* metrics, std::string method, const httplib::Response& res)
      : metrics_(metrics), method_(std::move(method)), res_(res) {}
  ~CallTimer() {
    if (metrics_ == nullptr) return;
    const double seconds = std::chrono::duration<double>(Clock::now() - start_).count();
    metrics_->Record(method_, CodeOf(res_), seconds, RequestMetrics::kHttp);
  }

 private:
  using Clock = std::chrono::steady_clock;
  RequestMetrics* metrics_;
  std::string method_;
  const httplib::Response& res_;
  Clock::time_point start_ = Clock::now();
};

}  // namespace

absl::StatusOr<std::unique_ptr<HttpServer>> HttpServer::Start(HttpServerOptions options) {
  const size_t colon = options.listen.rfind(':');
  int port = 0;
  if (colon == std::string::npos ||
      !absl::SimpleAtoi(options.listen.substr(colon + 1), &port) || port < 0 || port > 65535) {
    return absl::InvalidArgumentError(
        absl::StrCat("HTTP listen address: expected host:port, got '", options.listen, "'"));
  }
  std::string host = options.listen.substr(0, colon);
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']') {
    host = host.substr(1, host.size() - 2);
  }
  if (host.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat("HTTP listen address: no host in '", options.listen, "'"));
  }
  if (options.threads < 1) return absl::InvalidArgumentError("HTTP threads must be at least 1");
  const bool tls = !options.tls_cert_file.empty();
  if (tls != !options.tls_key_file.empty()) {
    return absl::InvalidArgumentError("HTTPS needs both a certificate and a key (--tls-cert and "
                                      "--tls-key)");
  }
  if (!tls && !options.tls_client_ca_file.empty()) {
    return absl::InvalidArgumentError("a client CA (--tls-client-ca) needs --tls-cert/--tls-key");
  }
  // Off loopback, the JSON API needs TLS and API keys, as gRPC does
  // (transport_security.cc): otherwise anyone who reaches it, or watches the
  // network, could read or drop every collection.
  const bool auth = options.rpc != nullptr && options.rpc->has_keys();
  if (options.rpc != nullptr && (!tls || !auth) && !options.insecure &&
      !IsLoopbackListen(options.listen)) {
    const std::string missing = !tls && !auth ? "without TLS and without API keys"
                                : !tls        ? "without TLS"
                                              : "without API keys";
    return absl::FailedPreconditionError(absl::StrCat(
        "refusing to serve the HTTP API on ", options.listen, " ", missing,
        ": anyone who reaches it could read or drop every collection. Give --tls-cert/--tls-key "
        "(HTTPS) and --key-file, listen on 127.0.0.1, or pass --insecure"));
  }

  std::unique_ptr<HttpServer> s(new HttpServer());
  s->options_ = std::move(options);
  const HttpServerOptions& o = s->options_;
  if (tls) {
    auto ssl = std::make_unique<httplib::SSLServer>(
        o.tls_cert_file.c_str(), o.tls_key_file.c_str(),
        o.tls_client_ca_file.empty() ? nullptr : o.tls_client_ca_file.c_str());
    // is_valid() is false when OpenSSL could not load a file (or the key does
    // not match the certificate): say which files, not just "failed".
    if (!ssl->is_valid()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "HTTPS: cannot load the certificate ", o.tls_cert_file, " and key ", o.tls_key_file,
          o.tls_client_ca_file.empty() ? "" : absl::StrCat(" and client CA ", o.tls_client_ca_file),
          " (PEM files; the key must be the certificate's)"));
    }
    s->server_ = std::move(ssl);
  } else {
    s->server_ = std::make_unique<httplib::Server>();
  }
  httplib::Server& svr = *s->server_;
  // SO_REUSEADDR only: cpp-httplib's default adds SO_REUSEPORT, with which a
  // second server on a busy port would start and take half its requests.
  svr.set_socket_options([](socket_t sock) {
    int yes = 1;
    ::setsockopt(sock, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof yes);
  });
  // A response goes out as headers then body: without TCP_NODELAY, Nagle holds
  // the body until the client's delayed ACK (40 ms a request on Linux).
  svr.set_tcp_nodelay(true);
  const size_t threads = static_cast<size_t>(o.threads);
  svr.new_task_queue = [threads] { return new httplib::ThreadPool(threads); };
  svr.set_payload_max_length(o.max_body_bytes);
  svr.set_error_handler([limit = o.max_body_bytes](const httplib::Request&,
                                                   httplib::Response& res) {
    if (!res.body.empty()) return;  // a handler's own error body
    absl::Status s =
        res.status == 413
            ? absl::ResourceExhaustedError(absl::StrCat(
                  "the request body is over the server's limit of ", limit,
                  " bytes (gRPC's largest message); send fewer documents or texts per call"))
        : res.status == 404 ? absl::NotFoundError("no such route (GET /openapi.json lists them)")
                            : absl::InvalidArgumentError(absl::StrCat(
                                  "the request is not valid HTTP (status ", res.status, ")"));
    res.set_content(ErrorJson(s, res.status), kJson);
  });

  svr.Get("/healthz", [](const httplib::Request&, httplib::Response& res) {
    res.set_content(R"({"status":"SERVING"})", kJson);
  });
  if (o.metrics) {
    svr.Get("/metrics", [&o](const httplib::Request&, httplib::Response& res) {
      res.set_content(o.metrics(), "text/plain; version=0.0.4; charset=utf-8");
    });
  }
  if (const JsonRpc* rpc = o.rpc) {
    const size_t limit = o.max_body_bytes;
    RequestMetrics* metrics = o.request_metrics;
    const std::vector<std::string> names = rpc->Methods();
    auto methods = std::make_shared<const absl::flat_hash_set<std::string>>(names.begin(),
                                                                            names.end());
    svr.Post(R"(/v1/rpc/([A-Za-z]+)/([A-Za-z]+))",
             [rpc, limit, metrics, methods](const httplib::Request& req, httplib::Response& res,
                                            const httplib::ContentReader& reader) {
               const std::string full =
                   absl::StrCat("/neodb.v1.", req.matches[1].str(), "/", req.matches[2].str());
               CallTimer timer(methods->contains(full) ? metrics : nullptr, full, res);
               std::string body;
               if (!ReadBody(reader, limit, &body, res)) return;
               Reply(rpc->Call(req.matches[1], req.matches[2], body, AuthorizationOf(req)), res);
             });
    svr.Post("/v1/embeddings", [rpc, limit, metrics](const httplib::Request& req,
                                                     httplib::Response& res,
                                                     const httplib::ContentReader& reader) {
      CallTimer timer(metrics, "/v1/embeddings", res);
      std::string body;
      if (!ReadBody(reader, limit, &body, res)) return;
      Reply(OpenAiEmbeddings(*rpc, body, AuthorizationOf(req)), res);
    });
    auto document = std::make_shared<const std::string>(OpenApiDocument(*rpc));
    svr.Get("/openapi.json", [document](const httplib::Request&, httplib::Response& res) {
      res.set_content(*document, kJson);
    });
    AddConsoleRoutes(svr);
  }

  if (port == 0) {
    s->port_ = svr.bind_to_any_port(host);
  } else {
    s->port_ = svr.bind_to_port(host, port) ? port : -1;
  }
  if (s->port_ <= 0) {
    return absl::UnavailableError(
        absl::StrCat("cannot listen on ", o.listen, " for HTTP (is another server using it?)"));
  }
  s->thread_ = std::thread([p = s.get()] { p->server_->listen_after_bind(); });
  return s;
}

HttpServer::~HttpServer() {
  if (thread_.joinable()) {
    // stop() does nothing until the loop has begun (it sets is_running first).
    while (!server_->is_running()) std::this_thread::yield();
    server_->stop();
    thread_.join();
  }
}

}  // namespace neodb::api
