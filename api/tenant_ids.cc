#include "api/tenant_ids.h"

#include "common/status_macros.h"
#include "engine/text_checks.h"

namespace neodb::api {
namespace {

absl::StatusOr<std::vector<std::string>> StoredIds(const engine::TenantScope& scope,
                                                   const std::vector<std::string>& ids) {
  std::vector<std::string> out;
  out.reserve(ids.size());
  for (const std::string& id : ids) {
    ASSIGN_OR_RETURN(std::string stored, scope.Stored(id));
    out.push_back(std::move(stored));
  }
  return out;
}

}  // namespace

absl::StatusOr<ScopedIds> ScopeIds(const engine::Database& db, const std::string& collection,
                                   const std::string& tenant,
                                   const std::vector<std::string>& ids) {
  ScopedIds out;
  ASSIGN_OR_RETURN(out.scope, db.ScopeOf(collection, tenant));
  ASSIGN_OR_RETURN(out.stored, StoredIds(out.scope, ids));
  return out;
}

absl::Status ScopeInputs(const engine::TenantScope& scope,
                         std::vector<engine::DocumentInput>* docs) {
  if (scope.whole()) return absl::OkStatus();
  for (engine::DocumentInput& d : *docs) {
    if (d.id.empty()) d.id = engine::GenerateDocumentId();
    ASSIGN_OR_RETURN(d.id, scope.Stored(d.id));
  }
  return absl::OkStatus();
}

void ToVisible(const engine::TenantScope& scope, std::vector<std::string>* ids) {
  if (scope.whole()) return;
  for (std::string& id : *ids) {
    if (scope.Owns(id)) id = std::string(scope.Visible(id));
  }
}

void ToVisible(const engine::TenantScope& scope, db::Document* doc) {
  if (!scope.whole() && scope.Owns(doc->id)) doc->id = std::string(scope.Visible(doc->id));
}

}  // namespace neodb::api
