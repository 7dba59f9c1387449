#pragma once
// Retrieval quality of a model on a collection, measured in process: every
// document of the collection is embedded with the model (as the server would:
// the collection's pooling, document prefix and overflow), each held-out
// query is ranked against all of them, and the metrics use the query's
// positives as the relevant set (binary gains).
//
// Modes: "vector" ranks all documents exactly by the collection's metric
// (index::ExactTopK, what a flat index runs); "hybrid" fuses the keyword leg (BM25 over the same
// documents, in a KeywordIndex read as the collection's own: its analyzer, BM25 parameters and
// title field; top keyword::kHybridLegDepth, as the server fetches) with the vector leg (as deep)
// by keyword::Fuse, and ranks the fused top 10; "keyword" is the keyword leg alone (the same for
// every model).
//
// Ties: documents are keyed by their position in CollectionDocs, which is
// document id order, and every leg and fusion breaks ties by the lower key
// (keyword::LegOrder), so adapt breaks them by document id as the server does.

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "encoder/encoder.h"
#include "index/keyword/fusion.h"
#include "index/keyword/keyword_index.h"
#include "index/metric.h"
#include "adapt/adapt_pairs.h"

namespace neodb::adapt {

struct RankMetrics {
  double ndcg_at_10 = 0;    // log2 discount, ideal DCG over min(|relevant|, 10)
  double recall_at_10 = 0;  // |relevant ∩ top 10| / |relevant|
  double mrr_at_10 = 0;     // 1 / rank of the first relevant, 0 beyond 10
  int64_t queries = 0;
  // Each query's nDCG@10, in order: two models' figures on the same queries
  // are paired (PairedBootstrap), and a user can see which queries moved.
  std::vector<double> ndcg_per_query;
};

// Metrics of ranked lists (best first) against relevant sets, averaged over
// queries. REQUIRES: ranked.size() == relevant.size(); no relevant set empty.
RankMetrics ScoreRankings(const std::vector<std::vector<int64_t>>& ranked,
                          const std::vector<std::vector<int64_t>>& relevant);

// How the collection's keyword index reads a document (its spec): the
// analyzer and BM25 parameters, and the weight of its title field (the
// documents' `titles`).
struct KeywordSettings {
  keyword::KeywordOptions options;
  float title_weight = 1.0f;
};

// The collection's documents in a BM25 index as the collection indexes them
// (each document's text, and its title at `title_weight` where it has one),
// keyed by position.
absl::StatusOr<std::unique_ptr<keyword::KeywordIndex>> BuildKeywordIndex(
    const CollectionDocs& docs, const KeywordSettings& settings);

// The keyword leg of each query: document positions, best first, at most `depth`.
absl::StatusOr<std::vector<std::vector<keyword::RankedId>>> KeywordLegs(
    const keyword::KeywordIndex& index, const std::vector<std::string>& queries, int depth);

// How the collection embeds (its spec), for the in-process embedding.
struct EmbedSettings {
  encoder::Pooling pooling = encoder::Pooling::kMean;
  encoder::Overflow overflow = encoder::Overflow::kError;
  std::string document_prefix;
  std::string query_prefix;
  // How its vector index scores: cosine (vectors normalised, as the index
  // normalises them on add and query), inner product or L2.
  index::Metric metric = index::Metric::kCosine;
  // The matmul precision its vectors are computed in. A host without the
  // instructions runs F32 (Encoder::precision_note says so), as the server does.
  encoder::Precision precision = encoder::Precision::kF32;
  // The collection's default fusion today (its spec): the "hybrid" mode.
  keyword::FusionOptions fusion;
};

// Rows of vectors [n, dim] made as the collection's vector index holds them:
// L2-normalised in place under cosine (index::NormalizeRows, what the index
// does on add and query), untouched under ip and l2.
void AsIndexed(std::vector<float>& rows, int64_t dim, index::Metric metric);

// The vectors of `texts` [texts, dim] as the collection's vector index holds
// them: L2-normalised under cosine, as pooled under ip and l2.
// `progress(done, total)` after each batch.
absl::StatusOr<std::vector<float>> EmbedAll(encoder::Encoder& enc,
                                            const std::vector<std::string>& texts,
                                            const encoder::EmbedOptions& options,
                                            index::Metric metric,
                                            const std::function<void(int64_t, int64_t)>& progress);

// The vector leg of each query: the best `depth` documents by `metric`
// (index::ExactTopK over EmbedAll's rows), best first, ties to the lower position.
std::vector<std::vector<keyword::RankedId>> VectorLegs(const std::vector<float>& queries,
                                                       const std::vector<float>& docs, int64_t dim,
                                                       int depth, index::Metric metric);

// What a mining round of `neodb adapt` asks of a model: the vector leg of
// each query (document positions, best first, at most `depth`) and the
// cosine of any query with any document.
struct ModelLegs {
  std::vector<std::vector<int64_t>> legs;
  std::vector<float> query_vecs;  // [queries, dim], as EmbedAll returns them
  std::vector<float> doc_vecs;    // [documents, dim], as EmbedAll returns them
  int64_t dim = 0;
  // The cosine of a query and a document (whatever the collection's metric:
  // how alike the model finds them).
  double Cosine(size_t query, int64_t doc) const;
};

// The ModelLegs of `queries` under `enc`, embedded as the collection embeds
// (documents with the document prefix, queries with the query prefix).
// `given_doc_vecs`: the documents' vectors under `enc` when the caller has
// them (as EmbedAll would return them); none embeds them here.
absl::StatusOr<ModelLegs> ModelVectorLegs(
    encoder::Encoder& enc, const CollectionDocs& docs, const std::vector<std::string>& queries,
    const EmbedSettings& settings, int depth, const std::function<void(int64_t, int64_t)>& progress,
    std::optional<std::vector<float>> given_doc_vecs = std::nullopt);

// One way of fusing the two legs, and how it ranked a query set.
struct FusionQuality {
  std::string label;  // "adaptive", "weighted:0.3", "rrf"
  keyword::FusionOptions options;
  RankMetrics metrics;
};

// The fusions adapt measures: the collection's current one first, then
// adaptive, weighted alpha 0.1 .. 0.9 in steps of 0.1 and reciprocal rank
// (each once). A new model can deserve a larger vector share than the
// collection gives it today, and only the user's held-out pairs can say how
// much (BestFusion).
std::vector<FusionQuality> CandidateFusions(const keyword::FusionOptions& current);

// "adaptive", "weighted:0.3", "rrf".
std::string FusionLabel(const keyword::FusionOptions& fusion);

struct ModelQuality {
  RankMetrics vector;
  RankMetrics hybrid;                  // the collection's current fusion
  std::vector<FusionQuality> fusions;  // CandidateFusions(settings.fusion), each scored
  double embed_seconds = 0;            // embedding the documents
};

// Queries to score, with their keyword legs (KeywordLegs over the same queries).
struct QuerySet {
  std::vector<QueryPositives> queries;
  std::vector<std::vector<keyword::RankedId>> keyword_legs;
};

// Embeds the documents with `enc` once and scores each query set in both
// modes and every candidate fusion; one ModelQuality per set, in order.
// `given_doc_vecs`: the documents' vectors under `enc` when the caller has them
// already (ModelLegs::doc_vecs of the same model and settings), so that the
// collection is not embedded twice; nullptr embeds them here.
absl::StatusOr<std::vector<ModelQuality>> EvaluateModel(
    encoder::Encoder& enc, const CollectionDocs& docs, const std::vector<const QuerySet*>& sets,
    const EmbedSettings& settings, const std::function<void(int64_t, int64_t)>& progress,
    const std::vector<float>* given_doc_vecs = nullptr);

// The fusion with the best nDCG@10 in `quality.fusions`; on a tie (within
// 0.001) the earlier one, so the collection's current fusion stays unless
// another is better.
const FusionQuality& BestFusion(const ModelQuality& quality);

// Top-10 positions of a ranked leg (the "keyword" mode's ranking).
std::vector<int64_t> Positions(const std::vector<keyword::RankedId>& leg, size_t limit);

}  // namespace neodb::adapt
