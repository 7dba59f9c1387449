#include "api/document_batch.h"

#include "absl/strings/str_cat.h"
#include "api/convert.h"
#include "api/tenant_ids.h"
#include "common/status_macros.h"

namespace neodb::api {

absl::Time DeadlineOf(const grpc::ServerContextBase* ctx, const ServiceLimits& limits) {
  const absl::Time cap = absl::Now() + limits.default_deadline;
  auto d = ctx->deadline();
  if (d == std::chrono::system_clock::time_point::max()) return cap;
  return std::min(cap, absl::FromChrono(d));
}

engine::CancelCheck CancelOf(const grpc::ServerContextBase* ctx) {
  return [ctx] { return ctx->IsCancelled(); };
}

absl::Status TooManyError(size_t n, const char* what, const ServiceLimits& limits) {
  return absl::InvalidArgumentError(absl::StrCat("request has ", n, " ", what, "; at most ",
                                                 limits.max_documents_per_request, " per request"));
}

absl::StatusOr<std::vector<engine::DocumentInput>> DocumentInputsFromProto(
    const ServiceLimits& limits, const google::protobuf::RepeatedPtrField<v1::Document>& docs) {
  if (docs.empty()) return absl::InvalidArgumentError("request has no documents");
  if (docs.size() > limits.max_documents_per_request) {
    return TooManyError(docs.size(), "documents", limits);
  }
  std::vector<engine::DocumentInput> in;
  in.reserve(docs.size());
  for (int i = 0; i < docs.size(); ++i) {
    const v1::Document& d = docs[i];
    engine::DocumentInput x;
    x.id = d.id();
    x.text = d.text();
    if (d.vector_size() > 0) x.vector.emplace(d.vector().begin(), d.vector().end());
    x.vector_model_id = d.vector_model_id();
    ASSIGN_OR_RETURN(
        x.metadata,
        FromProto(d.metadata(), d.id().empty() ? absl::StrCat("document #", i)
                                               : absl::StrCat("document '", d.id(), "'")));
    in.push_back(std::move(x));
  }
  return in;
}

absl::StatusOr<std::vector<std::string>> UpsertBatch(
    const WriteTarget& target, const ServiceLimits& limits, const grpc::ServerContextBase* ctx,
    const std::string& collection, const std::string& tenant,
    const google::protobuf::RepeatedPtrField<v1::Document>& docs, int64_t* tokens,
    cluster::ConsistencyToken* consistency) {
  ASSIGN_OR_RETURN(std::vector<engine::DocumentInput> in, DocumentInputsFromProto(limits, docs));
  if (target.cluster != nullptr && target.cluster->IsSharded(collection)) {
    if (!tenant.empty()) return NotForShardedTenants(collection);
    ASSIGN_OR_RETURN(cluster::ShardedWrite w,
                     target.cluster->Upsert(collection, std::move(in), DeadlineOf(ctx, limits)));
    if (tokens) *tokens += w.tokens;
    if (consistency) cluster::MergeToken(w.token, consistency);
    return std::move(w.ids);
  }
  ASSIGN_OR_RETURN(const engine::TenantScope scope, target.db->ScopeOf(collection, tenant));
  RETURN_IF_ERROR(ScopeInputs(scope, &in));
  ASSIGN_OR_RETURN(std::vector<std::string> ids,
                   target.db->Upsert(collection, std::move(in), DeadlineOf(ctx, limits), tokens,
                                     CancelOf(ctx)));
  ToVisible(scope, &ids);
  return ids;
}

absl::Status NotForShardedTenants(const std::string& collection) {
  return absl::InvalidArgumentError(absl::StrCat(
      "collection '", collection, "' is sharded, and sharded collections have no tenants yet"));
}

}  // namespace neodb::api
