#pragma once
// What the adapt job prints and writes of its measurements: the table of old
// and new model on stdout, the paired differences, the per-query lines of
// adapt_queries.jsonl, the held-out pairs it measured on.

#include <string>
#include <vector>

#include "adapt/adapt_pairs.h"
#include "adapt/collection_eval.h"
#include "nlohmann/json.hpp"

namespace neodb::adapt {

nlohmann::json MetricsJson(const RankMetrics& m);

// The held-out queries (query + positive_id lines) so a rerun, or a reader,
// can see exactly what was measured.
std::string PairsJsonl(const std::vector<QueryPositives>& queries, const CollectionDocs& docs);

// The "keyword" mode's metrics on `set` (the same for every model).
RankMetrics KeywordMetrics(const QuerySet& set);

// The table: keyword, vector and hybrid, old and new; `served`: the new
// model's fusion as it would be served (BestFusion).
void PrintTable(const RankMetrics& keyword_only, const ModelQuality& before,
                const ModelQuality& after, const FusionQuality& served);

// new - old nDCG@10 over the same queries, paired: the vector leg, and the
// hybrid as each model would be served (old: the collection's fusion; new:
// `served`). Printed under the table and returned for adapt.json.
nlohmann::json PrintDifferences(const ModelQuality& before, const ModelQuality& after,
                                const FusionQuality& served);

// One JSON line per query of `set`: its text, its relevant documents' ids,
// and its nDCG@10 under the old and the new model (vector; hybrid as each
// would be served), so that a user sees which queries the new model moves
// and two runs can be compared query by query (adapt/compare_runs.py).
std::string PerQueryJsonl(const std::string& set_name, const QuerySet& set,
                          const CollectionDocs& docs, const ModelQuality& before,
                          const ModelQuality& after, const FusionQuality& served);

// Every candidate fusion's nDCG@10, old and new, on the held-out pairs (and
// on the test pairs when `with_test`: the sets' second entries).
void PrintFusions(const std::vector<ModelQuality>& before, const std::vector<ModelQuality>& after,
                  bool with_test);

}  // namespace neodb::adapt
