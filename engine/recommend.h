#pragma once
// Recommend ("more like these, less like those"): the query vector made from
// example documents and vectors, and the checks on a recommend request.

#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace neodb::engine {

inline constexpr size_t kMaxRecommendExamples = 64;  // positive and negative together
inline constexpr double kMaxNegativeWeight = 10;

struct RecommendQuery {
  // Example documents of the collection (their stored vectors) and raw
  // vectors (the collection's dimension), more like these...
  std::vector<std::string> positive_ids;
  std::vector<std::vector<float>> positive_vectors;
  // ...and less like these.
  std::vector<std::string> negative_ids;
  std::vector<std::vector<float>> negative_vectors;
  // w in the formula below, 0..kMaxNegativeWeight. Default: 1.
  double negative_weight = 1;
};

// INVALID_ARGUMENT naming the field: no positive example, more than
// kMaxRecommendExamples examples, an empty or repeated id, a weight out of
// range. (Vectors are checked against the collection by the search.)
absl::Status ValidateRecommend(const RecommendQuery& q);

// The query vector: with P the mean of the positive vectors and N the mean of
// the negative ones,
//     q = P + w * (P - N)          (q = P when there are no negatives)
// With w = 1 this is Qdrant's "average_vector" strategy, 2P - N: it moves
// the positives' centre away from the negatives' by as much again.
// INVALID_ARGUMENT when the vectors differ in length (`dimension`).
absl::StatusOr<std::vector<float>> RecommendVector(
    const std::vector<std::vector<float>>& positives,
    const std::vector<std::vector<float>>& negatives, double negative_weight, size_t dimension);

}  // namespace neodb::engine
