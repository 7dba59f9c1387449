#include "engine/recommend.h"

#include <cmath>
#include <set>

#include "absl/strings/str_cat.h"

namespace neodb::engine {
namespace {

absl::StatusOr<std::vector<double>> Mean(const std::vector<std::vector<float>>& vs,
                                         size_t dimension, const char* what) {
  std::vector<double> mean(dimension, 0.0);
  for (size_t i = 0; i < vs.size(); ++i) {
    if (vs[i].size() != dimension) {
      return absl::InvalidArgumentError(absl::StrCat(what, " example #", i, " has ", vs[i].size(),
                                                     " values; the collection's dimension is ",
                                                     dimension));
    }
    for (size_t d = 0; d < dimension; ++d) mean[d] += vs[i][d];
  }
  for (double& x : mean) x /= static_cast<double>(vs.size());
  return mean;
}

}  // namespace

absl::Status ValidateRecommend(const RecommendQuery& q) {
  if (q.positive_ids.empty() && q.positive_vectors.empty()) {
    return absl::InvalidArgumentError(
        "positive_ids / positive_vectors: at least one positive example is needed");
  }
  const size_t n = q.positive_ids.size() + q.positive_vectors.size() + q.negative_ids.size() +
                   q.negative_vectors.size();
  if (n > kMaxRecommendExamples) {
    return absl::InvalidArgumentError(absl::StrCat(
        "examples: ", n, " given; at most ", kMaxRecommendExamples, " positive and negative"));
  }
  if (!(q.negative_weight >= 0 && q.negative_weight <= kMaxNegativeWeight)) {
    return absl::InvalidArgumentError(absl::StrCat("negative_weight is ", q.negative_weight,
                                                   "; it must be in 0..", kMaxNegativeWeight));
  }
  std::set<std::string> seen;
  for (const auto* ids : {&q.positive_ids, &q.negative_ids}) {
    const char* field = ids == &q.positive_ids ? "positive_ids" : "negative_ids";
    for (const std::string& id : *ids) {
      if (id.empty()) return absl::InvalidArgumentError(absl::StrCat(field, ": an empty id"));
      if (!seen.insert(id).second) {
        return absl::InvalidArgumentError(
            absl::StrCat(field, ": '", id, "' is given more than once"));
      }
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<std::vector<float>> RecommendVector(
    const std::vector<std::vector<float>>& positives,
    const std::vector<std::vector<float>>& negatives, double negative_weight, size_t dimension) {
  if (positives.empty()) return absl::InvalidArgumentError("no positive example");
  auto p = Mean(positives, dimension, "positive");
  if (!p.ok()) return p.status();
  std::vector<float> q(dimension);
  if (negatives.empty()) {
    for (size_t d = 0; d < dimension; ++d) q[d] = static_cast<float>((*p)[d]);
    return q;
  }
  auto n = Mean(negatives, dimension, "negative");
  if (!n.ok()) return n.status();
  for (size_t d = 0; d < dimension; ++d) {
    q[d] = static_cast<float>((*p)[d] + negative_weight * ((*p)[d] - (*n)[d]));
  }
  return q;
}

}  // namespace neodb::engine
