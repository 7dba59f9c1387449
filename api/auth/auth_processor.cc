#include "api/auth/auth_processor.h"

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "api/auth/method_roles.h"

namespace neodb::api {

grpc::Status ApiKeyAuthProcessor::Process(const InputMetadata& md, grpc::AuthContext* context,
                                          OutputMetadata* consumed, OutputMetadata*) {
  absl::string_view method;
  if (auto it = md.find(":path"); it != md.end()) {
    method = absl::string_view(it->second.data(), it->second.size());
  }
  const MethodAccess access = AccessFor(method);
  if (access.access == Access::kOpen) return grpc::Status::OK;
  auto reject = [&](grpc::StatusCode code, std::string message) {
    if (on_reject_) on_reject_(method, code);
    return grpc::Status(code, std::move(message));
  };
  auto it = md.find("authorization");
  if (it == md.end()) {
    return reject(grpc::StatusCode::UNAUTHENTICATED,
                  "this server needs an API key (--api-key or NEODB_API_KEY)");
  }
  absl::string_view value(it->second.data(), it->second.size());
  if (!absl::ConsumePrefix(&value, "Bearer ")) {
    return reject(grpc::StatusCode::UNAUTHENTICATED,
                  "the authorization header must be `Bearer <key>`");
  }
  std::optional<ApiKey> key = keys_->Find(value);
  if (!key) return reject(grpc::StatusCode::UNAUTHENTICATED, "unknown API key");
  // The key is spent: handlers never see it.
  consumed->insert({"authorization", std::string(it->second.data(), it->second.size())});
  if (key->role < access.role) {
    return reject(grpc::StatusCode::PERMISSION_DENIED,
                  absl::StrCat("key '", key->name, "' has role ", RoleName(key->role), "; ", method,
                               " needs ", RoleName(access.role)));
  }
  context->AddProperty("neodb.key_name", key->name);
  context->AddProperty("neodb.role", std::string(RoleName(key->role)));
  return grpc::Status::OK;
}

}  // namespace neodb::api
