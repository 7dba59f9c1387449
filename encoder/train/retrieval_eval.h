#pragma once
// Retrieval evaluation of an encoder on a pair file: each distinct query is
// ranked against the pool of every distinct positive and negative text of the
// file by cosine similarity; its relevant documents are the positives of all
// lines with that query.

#include <cstdint>
#include <vector>

#include "common/status_macros.h"
#include "encoder/backend.h"
#include "encoder/train/pairs.h"
#include "encoder/train/train_model.h"

namespace neodb::encoder::train {

struct EvalSet {
  std::vector<std::vector<int32_t>> queries;   // distinct, file order
  std::vector<std::vector<int32_t>> pool;      // distinct positives and negatives
  std::vector<std::vector<int64_t>> relevant;  // per query: pool indices
};

struct RetrievalMetrics {
  double recall_at_1 = 0;  // mean over queries of |relevant ∩ top-1| / |relevant|
  double recall_at_10 = 0;
  double mrr_at_10 = 0;   // 1 / rank of the first relevant document, 0 beyond 10
  double ndcg_at_10 = 0;  // binary gains, log2 discount
  int64_t num_queries = 0;
  int64_t pool_size = 0;
};

EvalSet BuildEvalSet(const std::vector<TokenizedPair>& pairs);

// Scores queries [nq, dim] against pool [np, dim] (cosine; ties broken by
// pool order).
RetrievalMetrics ScoreRetrieval(const float* queries, int64_t num_queries, const float* pool,
                                int64_t pool_size, int64_t dim,
                                const std::vector<std::vector<int64_t>>& relevant);

// Pooled embeddings [sequences, C] from the training forward in no-grad mode,
// packing at most max_batch_tokens tokens per forward pass.
std::vector<float> EmbedSequences(const TrainModel<float>& model, const float* params,
                                  const std::vector<std::vector<int32_t>>& sequences,
                                  Pooling pooling, int64_t max_batch_tokens = 8192);

RetrievalMetrics Evaluate(const TrainModel<float>& model, const float* params, const EvalSet& set,
                          Pooling pooling);

// The same metrics with the vectors from an inference backend (used for
// reduced precisions, which only the inference path has). Sequences are
// packed at most max_batch_tokens tokens per pass.
absl::StatusOr<RetrievalMetrics> Evaluate(Backend& backend, int64_t dim, const EvalSet& set,
                                          Pooling pooling, int64_t max_batch_tokens = 8192);

}  // namespace neodb::encoder::train
