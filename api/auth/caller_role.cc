#include "api/auth/caller_role.h"

#include <string>
#include <vector>

namespace neodb::api {
namespace {

thread_local std::optional<Role> in_process_role;

}  // namespace

std::optional<Role> CallerRole(const grpc::ServerContextBase& ctx) {
  const std::shared_ptr<const grpc::AuthContext> auth = ctx.auth_context();
  if (auth == nullptr) return in_process_role;
  const std::vector<grpc::string_ref> roles = auth->FindPropertyValues("neodb.role");
  if (roles.empty()) return in_process_role;
  absl::StatusOr<Role> role = ParseRole(std::string(roles.front().data(), roles.front().size()));
  // The processor wrote a name RoleName gave; anything else grants nothing.
  return role.ok() ? *role : Role::kRead;
}

ScopedCallerRole::ScopedCallerRole(std::optional<Role> role) : previous_(in_process_role) {
  in_process_role = role;
}

ScopedCallerRole::~ScopedCallerRole() { in_process_role = previous_; }

}  // namespace neodb::api
