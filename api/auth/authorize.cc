#include "api/auth/authorize.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "api/auth/method_roles.h"

namespace neodb::api {

absl::StatusOr<std::optional<Caller>> Authorize(const KeyRing& keys, absl::string_view method,
                                                std::optional<absl::string_view> authorization) {
  const MethodAccess access = AccessFor(method);
  if (access.access == Access::kOpen) return std::optional<Caller>();
  if (!authorization) {
    return absl::UnauthenticatedError("this server needs an API key (--api-key or NEODB_API_KEY)");
  }
  absl::string_view value = *authorization;
  if (!absl::ConsumePrefix(&value, "Bearer ")) {
    return absl::UnauthenticatedError("the authorization header must be `Bearer <key>`");
  }
  std::optional<ApiKey> key = keys.Find(value);
  if (!key) return absl::UnauthenticatedError("unknown API key");
  if (key->role < access.role) {
    return absl::PermissionDeniedError(absl::StrCat("key '", key->name, "' has role ",
                                                    RoleName(key->role), "; ", method, " needs ",
                                                    RoleName(access.role)));
  }
  return std::optional<Caller>(Caller{key->name, key->role});
}

}  // namespace neodb::api
