#pragma once
// NatsClient: one connection to a NATS cluster and its JetStream context,
// owned (nats.c's handles, destroyed in order). The client library reconnects
// by itself across the cluster's servers; calls made while it is away fail
// with UNAVAILABLE and the caller retries or reports.
//
// Every nats.c failure becomes an absl::Status here (NatsStatus) with the
// library's own text, so a caller never sees a bare natsStatus code.
//
// Thread-safety: nats.c connections and JetStream contexts are safe to use
// from several threads; so is this.

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "nats/nats.h"

namespace neodb::cluster {

struct NatsClientOptions {
  // nats://host:port of one or more servers of the cluster.
  std::vector<std::string> servers;
  // The name this client shows in the server's monitoring.
  std::string name = "neodb";
  // How long a request (a stream call) may wait.
  absl::Duration timeout = absl::Seconds(5);
  // How long one publish waits for its acknowledgement before the writer
  // retries it (same de-duplication id, so never stored twice). Short: an
  // ack lost with a killed server would otherwise hold the write for the
  // whole timeout, while a new stream leader answers within about a second.
  absl::Duration publish_attempt = absl::Seconds(1);
  // How long the client waits between reconnect attempts; it never gives up.
  absl::Duration reconnect_wait = absl::Milliseconds(250);
};

// `what` failed with nats.c's `s` (and JetStream's `js_error`, 0 when none):
// UNAVAILABLE for what a retry may cure (no servers, timeouts, no quorum),
// NOT_FOUND, INVALID_ARGUMENT, else INTERNAL; the message names `what`.
absl::Status NatsStatus(natsStatus s, jsErrCode js_error, const std::string& what);

class NatsClient {
 public:
  // Connects (UNAVAILABLE when no server answers within the timeout).
  static absl::StatusOr<std::unique_ptr<NatsClient>> Connect(const NatsClientOptions& options);
  ~NatsClient();
  NatsClient(const NatsClient&) = delete;
  NatsClient& operator=(const NatsClient&) = delete;

  // Servers of the NATS cluster this client knows (those it was given and
  // those the cluster told it of), at least 1.
  int ServerCount() const;

  natsConnection* connection() const { return conn_; }
  jsCtx* jetstream() const { return js_; }
  const NatsClientOptions& options() const { return options_; }

 private:
  NatsClient(NatsClientOptions options) : options_(std::move(options)) {}
  NatsClientOptions options_;
  natsOptions* opts_ = nullptr;
  natsConnection* conn_ = nullptr;
  jsCtx* js_ = nullptr;
};

}  // namespace neodb::cluster
