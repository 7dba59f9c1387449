#pragma once
// PeerChannels: how a clustered node dials the other nodes (the fan-out's
// searches, api/fan_out.h). One channel per address, kept: a channel per
// search would pay a TCP connect and an HTTP/2 handshake (and a TLS one) on
// every fan-out (9.9 ms at p50 on loopback, bench/cluster/README.md); gRPC
// reconnects a kept channel itself.
//
// A server with TLS dials its peers over TLS: the peers' certificates must be
// signed by the peer CA (SecurityOptions::tls_peer_ca, default the client
// CA, else the system's roots) and name the address they advertise; this
// node presents its own certificate, so peers that ask for client
// certificates (--tls-client-ca) accept it. A server without TLS dials in
// plaintext (a trusted network, or loopback).
//
// Thread-safe.

#include <map>
#include <memory>
#include <mutex>
#include <string>

#include "absl/status/statusor.h"
#include "api/auth/transport_security.h"
#include "grpcpp/grpcpp.h"

namespace neodb::api {

class PeerChannels {
 public:
  // INVALID_ARGUMENT for PEM files that cannot be read.
  static absl::StatusOr<std::unique_ptr<PeerChannels>> Make(const SecurityOptions& security);

  std::shared_ptr<grpc::Channel> To(const std::string& address);
  bool tls() const { return tls_; }

 private:
  PeerChannels(std::shared_ptr<grpc::ChannelCredentials> credentials, bool tls)
      : credentials_(std::move(credentials)), tls_(tls) {}

  const std::shared_ptr<grpc::ChannelCredentials> credentials_;
  const bool tls_;
  std::mutex mu_;
  std::map<std::string, std::shared_ptr<grpc::Channel>> channels_;
};

}  // namespace neodb::api
