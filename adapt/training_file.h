#pragma once
// The training file of one mining round: one line per (query, positive) with
// the query's mined negatives, from the collection's own searches (the
// server) and its keyword leg, or from a model in process.

#include <filesystem>
#include <vector>

#include "absl/status/statusor.h"
#include "adapt/adapt_options.h"
#include "adapt/adapt_pairs.h"
#include "adapt/collection_eval.h"
#include "adapt/server_side.h"
#include "index/keyword/keyword_index.h"
#include "nlohmann/json.hpp"

namespace neodb::adapt {

// Mines and writes `path`; returns counts for the report (mining.json).
// `model`: the training queries under the model being adapted, embedded in
// process (a later round, or --mine-max-score-ratio): its vector leg replaces
// the server's (unless --mine-from served/keyword in round 1:
// `model_leg_is_vector` false) and its scores feed the score rule; null = ask
// the server.
absl::StatusOr<nlohmann::json> MineTrainingFile(ServerSide& server, const AdaptOptions& a,
                                                const CollectionDocs& docs,
                                                const keyword::KeywordIndex& keyword_index,
                                                const std::vector<QueryPositives>& train,
                                                const ModelLegs* model, bool model_leg_is_vector,
                                                const NewProgress& progress,
                                                const std::filesystem::path& path);

}  // namespace neodb::adapt
