#pragma once
// Certificates and TLS channels for the integration tests that serve TLS
// (security_test, cluster_test): made with the openssl command in a test's
// directory.
#include <cstdlib>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>

#include "absl/strings/str_cat.h"
#include "grpcpp/grpcpp.h"
#include "gtest/gtest.h"
#include "tests/integration/test_env.h"

namespace neodb::testing {

// openssl req/x509 in `dir`: a CA, a server certificate for 127.0.0.1 and a
// client certificate, both signed by the CA.
inline void MakeCertificates(const TestDir& dir) {
  const std::string d = dir.Sub("");
  const std::string script =
      absl::StrCat("cd ", d,
                   " && exec >openssl.log 2>&1 && set -e && "
                   "openssl req -x509 -newkey rsa:2048 -nodes -keyout ca.key -out ca.pem -days 2 "
                   "-subj /CN=neodb-test-ca && "
                   "openssl req -newkey rsa:2048 -nodes -keyout server.key -out server.csr "
                   "-subj /CN=localhost && "
                   "printf 'subjectAltName=IP:127.0.0.1,DNS:localhost\\n' > san.ext && "
                   "openssl x509 -req -in server.csr -CA ca.pem -CAkey ca.key -CAcreateserial "
                   "-out server.pem -days 2 -extfile san.ext && "
                   "openssl req -newkey rsa:2048 -nodes -keyout client.key -out client.csr "
                   "-subj /CN=neodb-client && "
                   "openssl x509 -req -in client.csr -CA ca.pem -CAkey ca.key -CAcreateserial "
                   "-out client.pem -days 2");
  ASSERT_EQ(std::system(("bash -c '" + script + "'").c_str()), 0)
      << "openssl failed; see " << d << "/openssl.log";
}

inline std::string Slurp(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

inline std::shared_ptr<grpc::Channel> TlsChannel(const TestDir& dir, int port, bool client_cert) {
  grpc::SslCredentialsOptions o;
  o.pem_root_certs = Slurp(dir.Sub("ca.pem"));
  if (client_cert) {
    o.pem_cert_chain = Slurp(dir.Sub("client.pem"));
    o.pem_private_key = Slurp(dir.Sub("client.key"));
  }
  return grpc::CreateChannel(absl::StrCat("127.0.0.1:", port), grpc::SslCredentials(o));
}

}  // namespace neodb::testing
