#include "engine/tenant_scope.h"

#include "absl/strings/str_cat.h"
#include "db/document.h"

namespace neodb::engine {

absl::Status ValidateTenant(std::string_view tenant) {
  if (tenant.empty() || tenant.size() > kMaxTenantBytes) {
    return absl::InvalidArgumentError(
        absl::StrCat("tenant must be 1..", kMaxTenantBytes, " characters; got ", tenant.size()));
  }
  for (char c : tenant) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                    c == '_' || c == '-' || c == '.';
    if (!ok) {
      return absl::InvalidArgumentError(
          "tenant may contain only letters, digits, '_', '-' and '.'");
    }
  }
  return absl::OkStatus();
}

std::string_view TenantOfStoredId(std::string_view stored_id) {
  const size_t sep = stored_id.find(kTenantSeparator);
  if (sep == std::string_view::npos || sep == 0) return {};
  return stored_id.substr(0, sep);
}

absl::StatusOr<TenantScope> TenantScope::For(const db::CollectionSpec& spec,
                                             std::string_view tenant) {
  if (!spec.multi_tenant) {
    if (!tenant.empty()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "collection '", spec.name, "' is not multi-tenant: the call must not name a tenant"));
    }
    return TenantScope();
  }
  if (tenant.empty()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "collection '", spec.name, "' is multi-tenant: every call must name its tenant"));
  }
  if (absl::Status s = ValidateTenant(tenant); !s.ok()) return s;
  TenantScope scope;
  scope.tenant_ = std::string(tenant);
  scope.prefix_ = std::string(tenant) + kTenantSeparator;
  return scope;
}

absl::StatusOr<std::string> TenantScope::Stored(std::string_view id) const {
  if (whole() || id.empty()) return std::string(id);
  if (prefix_.size() + id.size() > db::kMaxDocumentIdBytes) {
    return absl::InvalidArgumentError(absl::StrCat(
        "document id of ", id.size(),
        " bytes is too long: in a multi-tenant collection ids are at most ",
        db::kMaxDocumentIdBytes - prefix_.size(), " bytes for tenant '", tenant_, "'"));
  }
  return prefix_ + std::string(id);
}

bool TenantScope::Owns(std::string_view stored_id) const {
  return whole() || (stored_id.size() > prefix_.size() && stored_id.starts_with(prefix_));
}

}  // namespace neodb::engine
