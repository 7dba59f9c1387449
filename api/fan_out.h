#pragma once
// A search of a sharded collection on a node that holds only some of its
// shards: each shard is served by one node that holds it (this node first,
// else the first live node of its placement), each chosen node answers from
// its own replicas (local_only, the caller's token and authorization passed
// on), and the hits are merged: deduplicated by id (a document found on two
// nodes is the same document with the same vector), ranked by score, ties by
// id, cut to k. Vector scores are comparable across nodes (one model, the
// same vectors); keyword and hybrid scores come from each node's own BM25
// statistics (README, "Beyond one machine": cluster-wide statistics are not
// built yet).
#include <functional>
#include <string>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "cluster/cluster_node.h"
#include "grpcpp/grpcpp.h"
#include "neodb/v1/neodb.grpc.pb.h"

namespace neodb::api {

// `local` answers `req` from this node's replicas (req.local_only set).
absl::StatusOr<v1::SearchResponse> FanOutNearText(
    cluster::ClusterNode& node, const grpc::ServerContext& ctx, v1::NearTextRequest req,
    absl::Time deadline,
    const std::function<absl::StatusOr<v1::SearchResponse>(const v1::NearTextRequest&)>& local);
absl::StatusOr<v1::SearchResponse> FanOutNearVector(
    cluster::ClusterNode& node, const grpc::ServerContext& ctx, v1::NearVectorRequest req,
    absl::Time deadline,
    const std::function<absl::StatusOr<v1::SearchResponse>(const v1::NearVectorRequest&)>& local);

}  // namespace neodb::api
