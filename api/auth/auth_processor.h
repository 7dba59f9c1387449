#pragma once
// ApiKeyAuthProcessor: where gRPC calls are authenticated and authorised.
// gRPC runs it on every call's initial metadata before any handler: the key
// comes in `authorization: Bearer <key>`; the decision is Authorize's
// (authorize.h, which the HTTP server asks too), the method's role AccessFor's
// (method_roles.h).
//   no key, or a key not in the ring  -> UNAUTHENTICATED
//   a key whose role is too low       -> PERMISSION_DENIED
//   health and reflection             -> open
// On success the auth context carries "neodb.key_name" and "neodb.role".
//
// Thread-safe (the ring is); never blocks, so gRPC runs it inline.

#include <functional>
#include <memory>

#include "api/auth/api_keys.h"
#include "grpcpp/security/auth_metadata_processor.h"

namespace neodb::api {

class ApiKeyAuthProcessor final : public grpc::AuthMetadataProcessor {
 public:
  // `on_reject(method, code)` (optional) is told of every refused call, for metrics.
  using RejectHook = std::function<void(absl::string_view method, grpc::StatusCode code)>;
  explicit ApiKeyAuthProcessor(std::shared_ptr<const KeyRing> keys, RejectHook on_reject = {})
      : keys_(std::move(keys)), on_reject_(std::move(on_reject)) {}

  bool IsBlocking() const override { return false; }
  grpc::Status Process(const InputMetadata& auth_metadata, grpc::AuthContext* context,
                       OutputMetadata* consumed_auth_metadata,
                       OutputMetadata* response_metadata) override;

 private:
  std::shared_ptr<const KeyRing> keys_;
  RejectHook on_reject_;
};

}  // namespace neodb::api
