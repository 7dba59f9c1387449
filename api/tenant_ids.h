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
#include "engine/database.h"
#include "engine/documents.h"
#include "engine/tenant_scope.h"

namespace neodb::api {

// A document call's scope on `collection` for `tenant`, and its `ids` as
// stored: what get, delete, update and list start with. Errors as
// Database::ScopeOf and TenantScope::Stored.
struct ScopedIds {
  engine::TenantScope scope;
  std::vector<std::string> stored;
};
absl::StatusOr<ScopedIds> ScopeIds(const engine::Database& db, const std::string& collection,
                                   const std::string& tenant,
                                   const std::vector<std::string>& ids = {});
// Each document's id as stored; a document without one gets a generated id
// here (the engine cannot tell whose it would be).
absl::Status ScopeInputs(const engine::TenantScope& scope,
                         std::vector<engine::DocumentInput>* docs);
// The caller's ids of stored ones, in place.
void ToVisible(const engine::TenantScope& scope, std::vector<std::string>* ids);
void ToVisible(const engine::TenantScope& scope, db::Document* doc);

}  // namespace neodb::api
