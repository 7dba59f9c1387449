#pragma once
// Which role each gRPC method needs: the one table every call is checked
// against (by ApiKeyAuthProcessor).

#include <optional>
#include <utility>
#include <vector>

#include "absl/strings/string_view.h"
#include "api/auth/api_keys.h"

namespace neodb::api {

enum class Access {
  kOpen,      // no key needed: health checks and server reflection
  kRequires,  // a key with at least the given role
};

struct MethodAccess {
  Access access = Access::kRequires;
  Role role = Role::kAdmin;
};

// `path` is the full method name as on the wire ("/neodb.v1.Search/NearText").
// Methods the table does not list need admin: a new RPC is closed until
// someone decides who may call it.
MethodAccess AccessFor(absl::string_view path);

// The methods the table lists explicitly (for tests that keep it complete).
const std::vector<std::pair<absl::string_view, Role>>& MethodRoleTable();

}  // namespace neodb::api
