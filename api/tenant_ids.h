#pragma once
// A multi-tenant collection's ids on their way through the transport
// (engine/tenant_scope.h): a caller names its own ids, the store keeps them
// under the tenant's prefix, and every id that goes back to the caller is
// its own again. Searches need none of this (the engine answers them with
// the tenant's ids); the document calls use these.

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "db/document.h"
#include "engine/documents.h"
#include "engine/tenant_scope.h"

namespace neodb::api {

// The stored ids of the caller's `ids`.
absl::StatusOr<std::vector<std::string>> StoredIds(const engine::TenantScope& scope,
                                                   const std::vector<std::string>& ids);
// Each document's id as stored; a document without one gets a generated id
// here (the engine cannot tell whose it would be).
absl::Status ScopeInputs(const engine::TenantScope& scope, std::vector<engine::DocumentInput>* docs);
// The caller's ids of stored ones, in place.
void ToVisible(const engine::TenantScope& scope, std::vector<std::string>* ids);
void ToVisible(const engine::TenantScope& scope, db::Document* doc);

}  // namespace neodb::api
