#pragma once
// Http2Limits: what one HTTP/2 connection may make the gRPC server do, as
// the channel arguments of the gRPC we build on (Debian's 1.51), which has
// none of the later fixes for HTTP/2 rapid reset (CVE-2023-44487). These are
// the floods 1.51 can bound by configuration (README, "Limits under hostile
// load"):
//  - streams at once per connection (MAX_CONCURRENT_STREAMS); a client that
//    opens more than it was told has its connection closed by gRPC;
//  - pings: the keepalive enforcement policy answers a ping flood with
//    GOAWAY (ENHANCE_YOUR_CALM, "too_many_pings") after max_ping_strikes
//    pings that came too soon;
//  - header lists (metadata) over max_metadata_bytes are refused;
//  - connections that are idle or old are sent GOAWAY, so no connection
//    lives for ever (off by default: a long ingest stream would be cut).
// What 1.51 cannot bound: the rate of streams a connection opens and resets
// (each costs the server a call's setup before the reset is read), and the
// number of connections.
//
// A plain struct; Check and Apply are pure.

#include "absl/status/status.h"
#include "absl/time/time.h"
#include "grpcpp/server_builder.h"

namespace neodb::api {

struct Http2Limits {
  // HTTP/2 streams one connection may have open at once
  // (GRPC_ARG_MAX_CONCURRENT_STREAMS); a well-behaved client queues more
  // until one ends. Default: 32.
  int max_streams_per_connection = 32;
  // The shortest gap between a client's pings that is not a strike, while
  // the server has sent nothing since the last ping
  // (GRPC_ARG_HTTP2_MIN_RECV_PING_INTERVAL_WITHOUT_DATA_MS). With no call
  // open, gRPC allows one ping per two hours whatever this says (unless
  // keepalive_permit_without_calls). gRPC's own default is 5 minutes, which
  // sends GOAWAY to common client keepalive settings (10–60 s) during a
  // long call. Default: 10 s.
  absl::Duration min_ping_interval = absl::Seconds(10);
  // Pings too soon tolerated before GOAWAY (GRPC_ARG_HTTP2_MAX_PING_STRIKES);
  // 0 tolerates any number, which switches the ping-flood defence off and
  // is refused by Check. Default: 2 (gRPC's).
  int max_ping_strikes = 2;
  // Whether a client may ping while it has no call open
  // (GRPC_ARG_KEEPALIVE_PERMIT_WITHOUT_CALLS). Default: false.
  bool keepalive_permit_without_calls = false;
  // Largest header list (metadata) of a call, in bytes
  // (GRPC_ARG_MAX_METADATA_SIZE); API keys and gRPC's own headers take a few
  // hundred. Default: 8 KiB (gRPC's, now stated).
  int max_metadata_bytes = 8 << 10;
  // A connection with no call open for this long is sent GOAWAY
  // (GRPC_ARG_MAX_CONNECTION_IDLE_MS); clients reconnect on their next
  // call. Zero: never. Default: zero.
  absl::Duration max_connection_idle = absl::ZeroDuration();
  // A connection older than this is sent GOAWAY (GRPC_ARG_MAX_CONNECTION_AGE_MS)
  // and its calls get max_connection_age_grace to finish before it is
  // closed. Zero: never. Default: zero.
  absl::Duration max_connection_age = absl::ZeroDuration();
  absl::Duration max_connection_age_grace = absl::Seconds(60);

  // INVALID_ARGUMENT naming the field (and its serve flag) that is out of range.
  absl::Status Check() const;
  // Sets the channel arguments on `builder`. REQUIRES: Check() is OK.
  void Apply(grpc::ServerBuilder& builder) const;
};

}  // namespace neodb::api
