#include "api/auth/method_roles.h"

#include "absl/strings/match.h"

namespace neodb::api {

const std::vector<std::pair<absl::string_view, Role>>& MethodRoleTable() {
  // read: everything that only looks; write: changes documents; admin:
  // changes collections or the server (and the costly whole-store scans).
  static const auto* table = new std::vector<std::pair<absl::string_view, Role>>{
      {"/neodb.v1.Collections/Create", Role::kAdmin},
      {"/neodb.v1.Collections/List", Role::kRead},
      {"/neodb.v1.Collections/Describe", Role::kRead},
      {"/neodb.v1.Collections/Drop", Role::kAdmin},
      {"/neodb.v1.Collections/SetFusion", Role::kAdmin},
      {"/neodb.v1.Documents/Upsert", Role::kWrite},
      {"/neodb.v1.Documents/BulkIngest", Role::kWrite},
      {"/neodb.v1.Documents/Ingest", Role::kWrite},
      {"/neodb.v1.Documents/Get", Role::kRead},
      {"/neodb.v1.Documents/Delete", Role::kWrite},
      {"/neodb.v1.Documents/List", Role::kRead},
      {"/neodb.v1.Documents/Count", Role::kRead},
      {"/neodb.v1.Documents/UpdateMetadata", Role::kWrite},
      // It names every tenant of the collection: not for a tenant's key.
      {"/neodb.v1.Documents/ListTenants", Role::kAdmin},
      {"/neodb.v1.Search/NearText", Role::kRead},
      {"/neodb.v1.Search/NearVector", Role::kRead},
      {"/neodb.v1.Search/KeywordStats", Role::kRead},
      {"/neodb.v1.Search/Recommend", Role::kRead},
      {"/neodb.v1.Search/BatchNearText", Role::kRead},
      {"/neodb.v1.Admin/ClusterRebalance", Role::kAdmin},
      {"/neodb.v1.Embedding/Embed", Role::kRead},
      {"/neodb.v1.Admin/Stats", Role::kRead},
      {"/neodb.v1.Admin/Snapshot", Role::kAdmin},
      {"/neodb.v1.Admin/Reindex", Role::kAdmin},
      {"/neodb.v1.Admin/ReindexStatus", Role::kRead},
      {"/neodb.v1.Admin/Compact", Role::kAdmin},
      {"/neodb.v1.Admin/Verify", Role::kAdmin},
      {"/neodb.v1.Admin/Backup", Role::kAdmin},
      {"/neodb.v1.Admin/ClusterBackup", Role::kAdmin},
      {"/neodb.v1.Admin/ClusterRestore", Role::kAdmin},
      {"/neodb.v1.Admin/ClusterStatus", Role::kRead},
  };
  return *table;
}

MethodAccess AccessFor(absl::string_view path) {
  if (absl::StartsWith(path, "/grpc.health.v1.Health/") ||
      absl::StartsWith(path, "/grpc.reflection.v1alpha.ServerReflection/") ||
      absl::StartsWith(path, "/grpc.reflection.v1.ServerReflection/")) {
    return {Access::kOpen, Role::kRead};
  }
  for (const auto& [method, role] : MethodRoleTable()) {
    if (method == path) return {Access::kRequires, role};
  }
  return {Access::kRequires, Role::kAdmin};
}

}  // namespace neodb::api
