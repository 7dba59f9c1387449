#pragma once
// A search of a sharded collection on a node that holds only some of its
// shards. Each shard is assigned to one node that holds it (this node first,
// else the first live node of its placement); each chosen node answers from
// its own replicas (local_only, the caller's token and authorization passed
// on; dialled through PeerChannels, over TLS when this server has it), and
// the answers are merged: deduplicated by id (a document found on
// two nodes is the same document with the same vector), ranked by score, ties
// by id, cut to k.
//
// So that a sharded collection ranks as one collection would
// (README, "Beyond one machine"):
// - vector scores are comparable across nodes as they are (one model, the
//   same vectors);
// - keyword (BM25) scores use the whole collection's statistics: the fan-out
//   first asks each chosen node for the statistics of the query's terms over
//   the shards assigned to it (Search/KeywordStats), sums them, and sends the
//   sum with the search (NearTextRequest.keyword_corpus), as Elasticsearch's
//   dfs_query_then_fetch does; one round trip more for keyword and hybrid;
// - hybrid is fused here, not on each node: each node returns its keyword
//   and its vector leg (two searches), the legs are merged as above, cut at
//   the engine's leg depth and fused as the engine fuses (index/keyword/
//   fusion.h), with the request's fusion or the collection's.
#include <functional>
#include <string>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "api/peer_channels.h"
#include "cluster/cluster_node.h"
#include "grpcpp/grpcpp.h"
#include "neodb/v1/neodb.grpc.pb.h"

namespace neodb::api {

// This node's answers to a fan-out's parts (the request's local_only set).
struct LocalSearch {
  std::function<absl::StatusOr<v1::SearchResponse>(const v1::NearTextRequest&)> near_text;
  std::function<absl::StatusOr<v1::SearchResponse>(const v1::NearVectorRequest&)> near_vector;
  std::function<absl::StatusOr<v1::KeywordCorpus>(const v1::KeywordStatsRequest&)> keyword_stats;
};

absl::StatusOr<v1::SearchResponse> FanOutNearText(cluster::ClusterNode& node, PeerChannels& peers,
                                                  const grpc::ServerContextBase& ctx,
                                                  v1::NearTextRequest req, absl::Time deadline,
                                                  const LocalSearch& local);
absl::StatusOr<v1::SearchResponse> FanOutNearVector(cluster::ClusterNode& node,
                                                    PeerChannels& peers,
                                                    const grpc::ServerContextBase& ctx,
                                                    v1::NearVectorRequest req, absl::Time deadline,
                                                    const LocalSearch& local);

}  // namespace neodb::api
