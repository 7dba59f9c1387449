#pragma once
// Authorize: the one decision on who may call which method, for every
// transport. gRPC's ApiKeyAuthProcessor and the HTTP server both ask it, with
// the method's full gRPC name and the `authorization` header's value:
//   an open method (health, reflection)    -> OK, no caller
//   no header, not `Bearer <key>`, unknown -> UNAUTHENTICATED
//   a key whose role is too low            -> PERMISSION_DENIED
// The role each method needs comes from AccessFor (method_roles.h).
//
// Thread-safe (the ring is); never blocks.

#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "api/auth/api_keys.h"

namespace neodb::api {

// Who a call's key says it is.
struct Caller {
  std::string key_name;
  Role role = Role::kRead;
};

// `method` is the full method name ("/neodb.v1.Search/NearText");
// `authorization` the header's value, nullopt when absent. An open method
// returns nullopt without looking at the header.
absl::StatusOr<std::optional<Caller>> Authorize(const KeyRing& keys, absl::string_view method,
                                                std::optional<absl::string_view> authorization);

}  // namespace neodb::api
