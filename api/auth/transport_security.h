#pragma once
// The server's transport security: TLS files, the API-key processor, and
// the rule for which listen addresses may go without them.

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "common/env.h"
#include "grpcpp/security/auth_metadata_processor.h"
#include "grpcpp/security/server_credentials.h"

namespace neodb::api {

struct SecurityOptions {
  // PEM files. cert and key together turn TLS on; client_ca (needs them)
  // turns on mutual TLS: clients must present a certificate it signed.
  std::string tls_cert, tls_key, tls_client_ca;
  // A clustered server with TLS dials the other nodes over TLS too (fan-out
  // searches), trusting this CA (PEM; default: tls_client_ca, else the
  // system's roots) and presenting tls_cert/tls_key as its client certificate.
  std::string tls_peer_ca;
  // Allows a non-loopback listen address without TLS or without API keys.
  // Default: false.
  bool insecure = false;
};

// The PEM file at `path`, read through env; INVALID_ARGUMENT naming `flag`
// and the path when unreadable (with the cause) or not PEM.
absl::StatusOr<std::string> ReadPem(const std::string& path, const char* flag,
                                    Env* env = Env::Default());

// True when `listen` ("host:port") names a loopback host: 127.0.0.0/8,
// [::1] or localhost.
bool IsLoopbackListen(const std::string& listen);

struct ServerCredentialsChoice {
  std::shared_ptr<grpc::ServerCredentials> credentials;
  // Empty, or why this configuration is unsafe (for a warning in the log).
  std::string warning;
};

// Credentials for `listen`. `auth` (nullable) checks API keys on every call.
//   TLS:                    SSL credentials (+ client CA), auth attached.
//   plaintext with auth:    local-TCP credentials (loopback peers only), auth
//                           attached; refused off loopback, as keys would
//                           cross the network in clear.
//   plaintext without auth: insecure credentials.
// Off loopback without TLS or without auth: FAILED_PRECONDITION unless
// options.insecure (then `warning` says why it is unsafe). Unreadable or
// half-given TLS files: INVALID_ARGUMENT.
absl::StatusOr<ServerCredentialsChoice> MakeServerCredentials(
    const SecurityOptions& options, const std::string& listen,
    std::shared_ptr<grpc::AuthMetadataProcessor> auth);

}  // namespace neodb::api
