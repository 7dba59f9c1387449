#include "api/auth/auth_processor.h"

#include "api/auth/authorize.h"
#include "api/grpc_status.h"

namespace neodb::api {

grpc::Status ApiKeyAuthProcessor::Process(const InputMetadata& md, grpc::AuthContext* context,
                                          OutputMetadata* consumed, OutputMetadata*) {
  absl::string_view method;
  if (auto it = md.find(":path"); it != md.end()) {
    method = absl::string_view(it->second.data(), it->second.size());
  }
  std::optional<absl::string_view> authorization;
  auto it = md.find("authorization");
  if (it != md.end()) authorization = absl::string_view(it->second.data(), it->second.size());
  absl::StatusOr<std::optional<Caller>> caller = Authorize(*keys_, method, authorization);
  if (!caller.ok()) {
    grpc::Status refused = ToGrpcStatus(caller.status());
    if (on_reject_) on_reject_(method, refused.error_code());
    return refused;
  }
  if (!caller->has_value()) return grpc::Status::OK;  // an open method
  // The key is spent: handlers never see it.
  consumed->insert({"authorization", std::string(it->second.data(), it->second.size())});
  context->AddProperty("neodb.key_name", (*caller)->key_name);
  context->AddProperty("neodb.role", std::string(RoleName((*caller)->role)));
  return grpc::Status::OK;
}

}  // namespace neodb::api
