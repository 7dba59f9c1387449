#include "encoder/train/retrieval_eval.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <numeric>

#include "common/status_macros.h"

namespace neodb::encoder::train {

EvalSet BuildEvalSet(const std::vector<TokenizedPair>& pairs) {
  EvalSet set;
  std::map<std::vector<int32_t>, int64_t> query_index, pool_index;
  auto pool_id = [&](const std::vector<int32_t>& ids) {
    auto [it, inserted] = pool_index.emplace(ids, static_cast<int64_t>(set.pool.size()));
    if (inserted) set.pool.push_back(ids);
    return it->second;
  };
  for (const TokenizedPair& p : pairs) {
    auto [it, inserted] = query_index.emplace(p.query, static_cast<int64_t>(set.queries.size()));
    if (inserted) {
      set.queries.push_back(p.query);
      set.relevant.emplace_back();
    }
    std::vector<int64_t>& rel = set.relevant[it->second];
    const int64_t pos = pool_id(p.positive);
    if (std::find(rel.begin(), rel.end(), pos) == rel.end()) rel.push_back(pos);
    for (const auto& n : p.negatives) pool_id(n);
  }
  return set;
}

RetrievalMetrics ScoreRetrieval(const float* queries, int64_t num_queries, const float* pool,
                                int64_t pool_size, int64_t dim,
                                const std::vector<std::vector<int64_t>>& relevant) {
  NEODB_CHECK(static_cast<int64_t>(relevant.size()) == num_queries);
  auto normalized = [dim](const float* x, int64_t rows) {
    std::vector<double> out(static_cast<size_t>(rows * dim));
    for (int64_t r = 0; r < rows; ++r) {
      double ss = 0;
      for (int64_t c = 0; c < dim; ++c) ss += static_cast<double>(x[r * dim + c]) * x[r * dim + c];
      const double inv = 1 / std::max(std::sqrt(ss), 1e-12);
      for (int64_t c = 0; c < dim; ++c) out[r * dim + c] = x[r * dim + c] * inv;
    }
    return out;
  };
  const std::vector<double> qn = normalized(queries, num_queries);
  const std::vector<double> pn = normalized(pool, pool_size);
  RetrievalMetrics m;
  m.num_queries = num_queries;
  m.pool_size = pool_size;
  std::vector<double> score(static_cast<size_t>(pool_size));
  std::vector<int64_t> order(static_cast<size_t>(pool_size));
  for (int64_t q = 0; q < num_queries; ++q) {
    for (int64_t j = 0; j < pool_size; ++j) {
      double s = 0;
      for (int64_t c = 0; c < dim; ++c) s += qn[q * dim + c] * pn[j * dim + c];
      score[j] = s;
    }
    std::iota(order.begin(), order.end(), 0);
    const int64_t k = std::min<int64_t>(10, pool_size);
    std::partial_sort(order.begin(), order.begin() + k, order.end(), [&](int64_t a, int64_t b) {
      return score[a] != score[b] ? score[a] > score[b] : a < b;
    });
    const std::vector<int64_t>& rel = relevant[q];
    auto is_rel = [&](int64_t j) { return std::find(rel.begin(), rel.end(), j) != rel.end(); };
    double hits1 = 0, hits10 = 0, dcg = 0, idcg = 0, rr = 0;
    for (int64_t r = 0; r < k; ++r) {
      if (!is_rel(order[r])) continue;
      if (r < 1) hits1 += 1;
      hits10 += 1;
      dcg += 1 / std::log2(static_cast<double>(r) + 2);
      if (rr == 0) rr = 1 / static_cast<double>(r + 1);
    }
    const int64_t nrel = static_cast<int64_t>(rel.size());
    for (int64_t r = 0; r < std::min<int64_t>(nrel, 10); ++r) {
      idcg += 1 / std::log2(static_cast<double>(r) + 2);
    }
    m.recall_at_1 += hits1 / nrel;
    m.recall_at_10 += hits10 / nrel;
    m.mrr_at_10 += rr;
    m.ndcg_at_10 += idcg > 0 ? dcg / idcg : 0;
  }
  if (num_queries > 0) {
    m.recall_at_1 /= num_queries;
    m.recall_at_10 /= num_queries;
    m.mrr_at_10 /= num_queries;
    m.ndcg_at_10 /= num_queries;
  }
  return m;
}

std::vector<float> EmbedSequences(const TrainModel<float>& model, const float* params,
                                  const std::vector<std::vector<int32_t>>& sequences,
                                  Pooling pooling, int64_t max_batch_tokens) {
  const int64_t c = model.layout().hidden_size();
  std::vector<float> out(sequences.size() * static_cast<size_t>(c));
  size_t start = 0;
  while (start < sequences.size()) {
    PackedBatch batch;
    batch.offsets = {0};
    size_t end = start;
    while (end < sequences.size() &&
           (end == start || batch.total_tokens() + static_cast<int64_t>(sequences[end].size()) <=
                                max_batch_tokens)) {
      AppendSequence(&batch, sequences[end]);
      ++end;
    }
    model.Forward(params, batch, 0, nullptr, pooling, out.data() + start * c, nullptr);
    start = end;
  }
  return out;
}

RetrievalMetrics Evaluate(const TrainModel<float>& model, const float* params, const EvalSet& set,
                          Pooling pooling) {
  const int64_t c = model.layout().hidden_size();
  const std::vector<float> q = EmbedSequences(model, params, set.queries, pooling);
  const std::vector<float> p = EmbedSequences(model, params, set.pool, pooling);
  return ScoreRetrieval(q.data(), static_cast<int64_t>(set.queries.size()), p.data(),
                        static_cast<int64_t>(set.pool.size()), c, set.relevant);
}

namespace {

absl::StatusOr<std::vector<float>> EmbedWithBackend(
    Backend& backend, int64_t dim, const std::vector<std::vector<int32_t>>& sequences,
    Pooling pooling, int64_t max_batch_tokens) {
  std::vector<float> out(sequences.size() * static_cast<size_t>(dim));
  size_t next = 0;
  while (next < sequences.size()) {
    PackedBatch batch;
    const size_t first = next;
    while (next < sequences.size() &&
           (batch.total_tokens() == 0 ||
            batch.total_tokens() + static_cast<int64_t>(sequences[next].size()) <=
                max_batch_tokens)) {
      batch.Add(sequences[next++]);
    }
    ASSIGN_OR_RETURN(Tensor pooled, backend.Pool(batch, pooling));
    std::copy(pooled.data<float>(), pooled.data<float>() + pooled.numel(),
              out.begin() + static_cast<int64_t>(first) * dim);
  }
  return out;
}

}  // namespace

absl::StatusOr<RetrievalMetrics> Evaluate(Backend& backend, int64_t dim, const EvalSet& set,
                                          Pooling pooling, int64_t max_batch_tokens) {
  ASSIGN_OR_RETURN(const std::vector<float> q,
                   EmbedWithBackend(backend, dim, set.queries, pooling, max_batch_tokens));
  ASSIGN_OR_RETURN(const std::vector<float> p,
                   EmbedWithBackend(backend, dim, set.pool, pooling, max_batch_tokens));
  return ScoreRetrieval(q.data(), static_cast<int64_t>(set.queries.size()), p.data(),
                        static_cast<int64_t>(set.pool.size()), dim, set.relevant);
}

}  // namespace neodb::encoder::train
