#pragma once
// What the document-writing calls share (Documents.Upsert, and each message
// of BulkIngest and Ingest): the call's deadline and cancellation as the
// engine sees them, and one batch of documents validated and upserted.
// Works for both of gRPC's APIs (sync handlers and callback reactors): only
// grpc::ServerContextBase is used.

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "cluster/cluster_node.h"
#include "engine/database.h"
#include "api/service_limits.h"
#include "grpcpp/grpcpp.h"
#include "neodb/v1/neodb.pb.h"

namespace neodb::api {

// The client's deadline, capped at limits.default_deadline from now.
absl::Time DeadlineOf(const grpc::ServerContextBase* ctx, const ServiceLimits& limits);

// The client's cancellation (or its connection's loss) as the engine sees
// it: the embed batcher drops the call's queued encoder work once this turns
// true (embed_batcher.h), instead of computing vectors nobody will read.
// `ctx` must outlive every use of the check.
engine::CancelCheck CancelOf(const grpc::ServerContextBase* ctx);

// INVALID_ARGUMENT: a request with `n` `what`s, over max_documents_per_request.
absl::Status TooManyError(size_t n, const char* what, const ServiceLimits& limits);

// `docs` as the engine takes them, checked for count and metadata.
absl::StatusOr<std::vector<engine::DocumentInput>> DocumentInputsFromProto(
    const ServiceLimits& limits, const google::protobuf::RepeatedPtrField<v1::Document>& docs);

// Where a write goes: the database, and on a server in a cluster its node
// (null otherwise), through which a sharded collection is written.
struct WriteTarget {
  engine::Database* db = nullptr;
  cluster::ClusterNode* cluster = nullptr;
};

// Validates `docs` (count, metadata) and upserts them into `collection`
// for `tenant` (a multi-tenant collection's; else empty: the ids given and
// returned are the tenant's own, tenant_ids.h) under ctx's deadline and
// cancellation, through the cluster when the
// collection is sharded (then `*consistency`, when not null, gains the
// write's positions); the ids stored, in order. Adds the tokens embedded to
// `*tokens` when it is not null. Blocks (the embed queue, fsync'd writes,
// quorum acks): never call it on a gRPC callback thread.
absl::StatusOr<std::vector<std::string>> UpsertBatch(
    const WriteTarget& target, const ServiceLimits& limits, const grpc::ServerContextBase* ctx,
    const std::string& collection, const std::string& tenant,
    const google::protobuf::RepeatedPtrField<v1::Document>& docs, int64_t* tokens,
    cluster::ConsistencyToken* consistency = nullptr);

// INVALID_ARGUMENT: a tenant named on a call of a sharded collection (they
// cannot be multi-tenant yet).
absl::Status NotForShardedTenants(const std::string& collection);

}  // namespace neodb::api
