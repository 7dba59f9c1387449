#include "api/http/http_server.h"

#include <sys/socket.h>

#include <optional>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "api/auth/transport_security.h"
#include "api/http/http_status.h"
#include "api/http/openai_embeddings.h"
#include "api/http/openapi.h"
#include "httplib.h"

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
  if (options.rpc != nullptr && !options.insecure && !IsLoopbackListen(options.listen)) {
    return absl::FailedPreconditionError(absl::StrCat(
        "the HTTP API has no TLS yet: it listens on loopback only (", options.listen,
        " is not) unless --insecure"));
  }

  std::unique_ptr<HttpServer> s(new HttpServer());
  s->options_ = std::move(options);
  const HttpServerOptions& o = s->options_;
  s->server_ = std::make_unique<httplib::Server>();
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
  svr.set_error_handler([](const httplib::Request&, httplib::Response& res) {
    if (!res.body.empty()) return;  // a handler's own error body
    absl::Status s = res.status == 413
                         ? absl::ResourceExhaustedError("the request body is over the limit")
                         : absl::NotFoundError("no such route (GET /openapi.json lists them)");
    res.set_content(ErrorJson(s), kJson);
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
    svr.Post(R"(/v1/rpc/([A-Za-z]+)/([A-Za-z]+))",
             [rpc](const httplib::Request& req, httplib::Response& res) {
               Reply(rpc->Call(req.matches[1], req.matches[2], req.body, AuthorizationOf(req)),
                     res);
             });
    svr.Post("/v1/embeddings", [rpc](const httplib::Request& req, httplib::Response& res) {
      Reply(OpenAiEmbeddings(*rpc, req.body, AuthorizationOf(req)), res);
    });
    auto document = std::make_shared<const std::string>(OpenApiDocument(*rpc));
    svr.Get("/openapi.json", [document](const httplib::Request&, httplib::Response& res) {
      res.set_content(*document, kJson);
    });
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
