#include "api/auth/transport_security.h"

#include <arpa/inet.h>

#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"

namespace neodb::api {
absl::StatusOr<std::string> ReadPem(const std::string& path, const char* flag, Env* env) {
  absl::StatusOr<std::string> text = ReadFileToString(env, path);
  if (!text.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat(flag, ": cannot read ", path, " (", text.status().message(), ")"));
  }
  std::string s = *std::move(text);
  if (s.find("-----BEGIN ") == std::string::npos) {
    return absl::InvalidArgumentError(absl::StrCat(flag, ": ", path, " is not a PEM file"));
  }
  return s;
}

bool IsLoopbackListen(const std::string& listen) {
  absl::string_view host(listen);
  const size_t colon = host.rfind(':');
  if (colon != absl::string_view::npos) host = host.substr(0, colon);
  if (absl::ConsumePrefix(&host, "[")) absl::ConsumeSuffix(&host, "]");
  if (host == "localhost") return true;
  std::string h(host);
  in_addr v4;
  if (inet_pton(AF_INET, h.c_str(), &v4) == 1) return (ntohl(v4.s_addr) >> 24) == 127;
  in6_addr v6;
  if (inet_pton(AF_INET6, h.c_str(), &v6) == 1) return IN6_IS_ADDR_LOOPBACK(&v6);
  return false;  // 0.0.0.0, [::], names: reachable from elsewhere
}

absl::StatusOr<ServerCredentialsChoice> MakeServerCredentials(
    const SecurityOptions& options, const std::string& listen,
    std::shared_ptr<grpc::AuthMetadataProcessor> auth) {
  const bool tls = !options.tls_cert.empty() || !options.tls_key.empty();
  if (tls && (options.tls_cert.empty() || options.tls_key.empty())) {
    return absl::InvalidArgumentError("--tls-cert and --tls-key go together");
  }
  if (!options.tls_client_ca.empty() && !tls) {
    return absl::InvalidArgumentError("--tls-client-ca needs --tls-cert and --tls-key");
  }
  const bool loopback = IsLoopbackListen(listen);
  ServerCredentialsChoice out;
  if (!loopback && (!tls || !auth)) {
    const std::string missing = !tls && !auth ? "without TLS and without API keys"
                                : !tls        ? "without TLS"
                                              : "without API keys";
    if (!options.insecure) {
      return absl::FailedPreconditionError(absl::StrCat(
          "refusing to listen on ", listen, " ", missing,
          ": anyone who reaches it could read or drop every collection. Give --tls-cert/"
          "--tls-key and --key-file, listen on 127.0.0.1, or pass --insecure"));
    }
    out.warning = absl::StrCat("listening on ", listen, " ", missing, " (--insecure)");
  }
  if (tls) {
    grpc::SslServerCredentialsOptions ssl;
    auto cert = ReadPem(options.tls_cert, "--tls-cert");
    if (!cert.ok()) return cert.status();
    auto key = ReadPem(options.tls_key, "--tls-key");
    if (!key.ok()) return key.status();
    ssl.pem_key_cert_pairs.push_back({*key, *cert});
    if (!options.tls_client_ca.empty()) {
      auto ca = ReadPem(options.tls_client_ca, "--tls-client-ca");
      if (!ca.ok()) return ca.status();
      ssl.pem_root_certs = *ca;
      ssl.client_certificate_request = GRPC_SSL_REQUEST_AND_REQUIRE_CLIENT_CERTIFICATE_AND_VERIFY;
    }
    out.credentials = grpc::SslServerCredentials(ssl);
  } else if (auth) {
    if (!loopback) {
      return absl::FailedPreconditionError(
          absl::StrCat("API keys on ", listen,
                       " need TLS (--tls-cert/--tls-key): without it the keys "
                       "would cross the network in clear"));
    }
    // gRPC attaches a metadata processor only to secure credentials; local
    // TCP credentials are those for plaintext on loopback (no handshake on
    // the wire, so any plaintext client connects).
    out.credentials = grpc::experimental::LocalServerCredentials(LOCAL_TCP);
  } else {
    out.credentials = grpc::InsecureServerCredentials();
  }
  if (auth) out.credentials->SetAuthMetadataProcessor(std::move(auth));
  return out;
}

}  // namespace neodb::api
