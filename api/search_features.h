#pragma once
// The search features past a plain top-k (issue 52): score threshold, offset,
// group-by, recommend and batches of near-text queries. The Search service
// answers them here for unsharded collections; a sharded collection's
// fan-out (fan_out.h) does not merge them yet, so they are refused for it
// (FAILED_PRECONDITION naming the feature) rather than computed over one
// node's part.
#include <string>

#include "absl/status/statusor.h"
#include "engine/database.h"
#include "neodb/v1/neodb.pb.h"

namespace neodb::api {

// The search's hits (or groups) and how they were ranked, moved into `out`.
void SearchResultToProto(engine::SearchResult& r, v1::SearchResponse* out);

// FAILED_PRECONDITION naming `feature` for the sharded `collection`.
absl::Status NotYetForSharded(const std::string& feature, const std::string& collection);
// The first feature of a NearText / NearVector request that a sharded
// collection cannot answer yet ("score_threshold", "offset", "group_by"),
// or "" when it uses none.
std::string ShardedUnsupportedFeature(const v1::NearTextRequest& req);
std::string ShardedUnsupportedFeature(const v1::NearVectorRequest& req);

// Recommend on this node's collection (engine::Database::Recommend).
absl::StatusOr<v1::SearchResponse> RecommendHere(const engine::Database& db,
                                                 const v1::RecommendRequest& req);

// A batch of near-text queries on this node's collection
// (engine::Database::BatchNearText): each query's own error is its result's
// code and message. INVALID_ARGUMENT for the whole call only for no queries
// or too many; NOT_FOUND for an unknown collection.
absl::StatusOr<v1::BatchSearchResponse> BatchNearTextHere(const engine::Database& db,
                                                          const v1::BatchNearTextRequest& req,
                                                          absl::Time deadline,
                                                          const engine::CancelCheck& cancelled);

}  // namespace neodb::api
