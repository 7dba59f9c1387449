#pragma once
// HttpEndpoint: a minimal HTTP/1.0 server on one thread that answers
// `GET /metrics` with Prometheus' text format (and 404 otherwise). One
// connection at a time: a scrape every few seconds needs no more, and it keeps
// a dependency (civetweb) out. Requests larger than 8 KiB or slower than 5 s
// are dropped.
//
// Thread-safe: the render callback runs on the endpoint's thread.

#include <atomic>
#include <functional>
#include <memory>
#include <string>
#include <thread>

#include "absl/status/statusor.h"

namespace neodb::api {

class HttpEndpoint {
 public:
  // Listens on `listen` ("host:port", IPv4 or "localhost"; port 0 picks a
  // free one) and serves `render()` at /metrics until destroyed.
  static absl::StatusOr<std::unique_ptr<HttpEndpoint>> Start(const std::string& listen,
                                                             std::function<std::string()> render);
  ~HttpEndpoint();

  int port() const { return port_; }

 private:
  HttpEndpoint() = default;
  void Loop();
  void Serve(int fd);

  std::function<std::string()> render_;
  int listen_fd_ = -1;
  int wake_[2] = {-1, -1};  // a pipe: writing to it ends Loop
  int port_ = 0;
  std::thread thread_;
};

}  // namespace neodb::api
