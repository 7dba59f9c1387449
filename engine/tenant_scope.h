#pragma once
// Tenants of a multi-tenant collection (db::CollectionSpec::multi_tenant).
//
// One collection, one model, one set of settings and one index serve every
// tenant; a tenant's documents are stored under "<tenant>/<id>". A tenant
// name holds no '/', so the stored id's first '/' ends the tenant: "a/b/c"
// is tenant "a"'s document "b/c", and no id a caller of tenant "a" can name
// is stored under another tenant. Every call on such a collection names its
// tenant; the transport maps ids through a TenantScope on the way in and out
// (so generated ids, missing ids and hits are the tenant's own), and the
// engine keeps every read inside the tenant: searches (SearchParams::tenant)
// scan that tenant's documents only (MetadataTable's per-tenant ids, with a
// tenant's own BM25 statistics), and counts, lists and selections by filter
// see nothing else. bench/tenants says why one index and not one per tenant.

#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "db/collection_spec.h"

namespace neodb::engine {

inline constexpr size_t kMaxTenantBytes = 64;
inline constexpr char kTenantSeparator = '/';

// OK when `tenant` is 1..64 characters of [A-Za-z0-9_.-]; INVALID_ARGUMENT
// otherwise.
absl::Status ValidateTenant(std::string_view tenant);

// The tenant part of a stored id of a multi-tenant collection ("" when it
// has none: not such an id).
std::string_view TenantOfStoredId(std::string_view stored_id);

class TenantScope {
 public:
  // The whole collection: ids pass unchanged (a single-tenant collection).
  TenantScope() = default;
  // The scope of a call on `spec`'s collection that names `tenant` (empty:
  // none). INVALID_ARGUMENT when a multi-tenant collection is called without
  // a tenant, a single-tenant one with one, or the name is malformed.
  static absl::StatusOr<TenantScope> For(const db::CollectionSpec& spec, std::string_view tenant);

  const std::string& tenant() const { return tenant_; }
  bool whole() const { return tenant_.empty(); }
  // What a stored id of this tenant starts with ("" for the whole collection).
  const std::string& prefix() const { return prefix_; }

  // The stored id of the caller's `id` ("" stays "": generate one, then
  // scope it). INVALID_ARGUMENT when the stored id would exceed
  // db::kMaxDocumentIdBytes (the message gives the caller's limit).
  absl::StatusOr<std::string> Stored(std::string_view id) const;
  // Whether `stored_id` is one of this scope's documents.
  bool Owns(std::string_view stored_id) const;
  // The caller's id of a stored one. REQUIRES: Owns(stored_id).
  std::string_view Visible(std::string_view stored_id) const {
    return stored_id.substr(prefix_.size());
  }

 private:
  std::string tenant_;
  std::string prefix_;  // tenant_ + '/'
};

}  // namespace neodb::engine
