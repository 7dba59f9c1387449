#pragma once
// InfoNCE on cosine similarity (NEOBERT.md §6): for query i the candidates are
// every positive of the batch (in-batch negatives) followed by every hard
// negative of the batch; logits = cos(q_i, c_j) / τ; loss = mean over queries
// of the cross-entropy with the query's own positive (candidate i) as label.
// A candidate that is known to be another positive of query i (the same
// document as its positive, or a positive of the same query in another pair)
// is not a negative: `excluded` leaves it out of row i's softmax.

#include <cstdint>

namespace neodb::encoder::train {

struct InfoNceResult {
  double loss = 0;
  double accuracy = 0;   // fraction of queries whose own positive has the top logit
  int64_t excluded = 0;  // (query, candidate) pairs left out as known positives
};

// queries [B, C], positives [B, C], negatives [M, C] (M may be 0; then
// negatives may be nullptr). Writes the gradients of the loss w.r.t. each
// (unnormalised) embedding into d_queries [B, C], d_positives [B, C],
// d_negatives [M, C] (overwritten). excluded: nullptr, or [B, B+M] with a
// nonzero entry (i, j) for each candidate j that query i must not be pushed
// away from; never (i, i). REQUIRES: B >= 1, temperature > 0.
// Computed in double whatever T is (the matrices are small).
template <typename T>
InfoNceResult InfoNce(const T* queries, const T* positives, int64_t batch, const T* negatives,
                      int64_t num_negatives, int64_t dim, double temperature, T* d_queries,
                      T* d_positives, T* d_negatives, const uint8_t* excluded = nullptr);

}  // namespace neodb::encoder::train
