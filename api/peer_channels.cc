#include "api/peer_channels.h"

#include "common/status_macros.h"

namespace neodb::api {

absl::StatusOr<std::unique_ptr<PeerChannels>> PeerChannels::Make(const SecurityOptions& security) {
  if (security.tls_cert.empty()) {
    return std::unique_ptr<PeerChannels>(
        new PeerChannels(grpc::InsecureChannelCredentials(), false));
  }
  grpc::SslCredentialsOptions o;
  const std::string& ca = !security.tls_peer_ca.empty() ? security.tls_peer_ca
                                                        : security.tls_client_ca;
  if (!ca.empty()) {
    ASSIGN_OR_RETURN(o.pem_root_certs,
                     ReadPem(ca, security.tls_peer_ca.empty() ? "--tls-client-ca" : "--peer-ca"));
  }
  ASSIGN_OR_RETURN(o.pem_cert_chain, ReadPem(security.tls_cert, "--tls-cert"));
  ASSIGN_OR_RETURN(o.pem_private_key, ReadPem(security.tls_key, "--tls-key"));
  return std::unique_ptr<PeerChannels>(new PeerChannels(grpc::SslCredentials(o), true));
}

std::shared_ptr<grpc::Channel> PeerChannels::To(const std::string& address) {
  std::lock_guard<std::mutex> lock(mu_);
  std::shared_ptr<grpc::Channel>& c = channels_[address];
  if (c == nullptr) c = grpc::CreateChannel(address, credentials_);
  return c;
}

}  // namespace neodb::api
