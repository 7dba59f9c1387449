#pragma once
// A clustered node's part of /metrics: each of its replicas (position, lag
// behind its shard's stream, changes applied, resynchronisations, health)
// and its fan-outs (calls to other nodes by node, RPC and status, their
// latency, and each fanned-out search's latency by mode).

#include <string>

#include "cluster/cluster_node.h"

namespace neodb::api {

// Never fails: a stream that cannot be read leaves its lag out.
std::string RenderClusterMetrics(cluster::ClusterNode& node);

}  // namespace neodb::api
