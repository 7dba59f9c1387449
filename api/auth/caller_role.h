#pragma once
// The role of the key a call came with, for the handlers whose answer depends
// on it (Admin.Stats shows the server's models directory to admin keys only).
//
// gRPC calls carry it in their auth context (ApiKeyAuthProcessor puts it
// there). The HTTP server runs the same handlers in process, on its own
// thread, with a grpc::ServerContext that belongs to no call and so has no
// auth context: it names the caller's role with a ScopedCallerRole around
// the handler, which runs to completion on that thread.

#include <optional>

#include "api/auth/api_keys.h"
#include "grpcpp/grpcpp.h"

namespace neodb::api {

// The caller's role; nullopt on a server without keys.
std::optional<Role> CallerRole(const grpc::ServerContextBase& ctx);

// While alive, CallerRole on this thread answers `role` for contexts without
// an auth context. Not copyable; nests (the previous value comes back).
class ScopedCallerRole {
 public:
  explicit ScopedCallerRole(std::optional<Role> role);
  ~ScopedCallerRole();
  ScopedCallerRole(const ScopedCallerRole&) = delete;
  ScopedCallerRole& operator=(const ScopedCallerRole&) = delete;

 private:
  std::optional<Role> previous_;
};

}  // namespace neodb::api
