#include "index/index_util.h"

#include <cmath>
#include <unordered_set>

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "index/exact_search.h"

namespace neodb::index {

absl::Status ValidateAddArgs(std::span<const int64_t> ids, std::span<const float> vectors,
                             int dim) {
  if (vectors.size() != ids.size() * static_cast<size_t>(dim)) {
    return absl::InvalidArgumentError(absl::StrCat("got ", vectors.size(), " values for ",
                                                   ids.size(), " ids of dimension ", dim));
  }
  std::unordered_set<int64_t> seen;
  seen.reserve(ids.size());
  for (int64_t id : ids) {
    if (id < 0) return absl::InvalidArgumentError(absl::StrCat("negative id ", id));
    if (!seen.insert(id).second) {
      return absl::InvalidArgumentError(absl::StrCat("id ", id, " repeated in one Add"));
    }
  }
  for (size_t i = 0; i < vectors.size(); ++i) {
    if (!std::isfinite(vectors[i])) {
      return absl::InvalidArgumentError(
          absl::StrCat("vector of id ", ids[i / dim], " has a non-finite value"));
    }
  }
  return absl::OkStatus();
}

absl::Status ValidateSearchArgs(std::span<const float> queries, int k, int dim) {
  if (k < 1 || k > kMaxK) {
    return absl::InvalidArgumentError(absl::StrCat("k=", k, " is outside 1..", kMaxK));
  }
  if (queries.empty() || queries.size() % dim != 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "query has ", queries.size(), " values; expected a non-zero multiple of ", dim));
  }
  for (float v : queries) {
    if (!std::isfinite(v)) return absl::InvalidArgumentError("query has a non-finite value");
  }
  return absl::OkStatus();
}

absl::StatusOr<std::vector<float>> SearchQueries(std::span<const float> queries, int k, int dim,
                                                 Metric metric) {
  RETURN_IF_ERROR(ValidateSearchArgs(queries, k, dim));
  std::vector<float> q(queries.begin(), queries.end());
  if (metric == Metric::kCosine) NormalizeRows(q.data(), q.size() / dim, dim);
  return q;
}

void WriteIndexHeader(ByteWriter* w, std::string_view spec, int dim, Metric metric) {
  w->Raw(kIndexMagic, 8);
  w->Str(spec);
  w->U32(static_cast<uint32_t>(dim));
  w->U8(static_cast<uint8_t>(metric));
}

absl::Status ValidateReconstructArgs(std::span<const float> out, int dim) {
  if (out.size() == static_cast<size_t>(dim)) return absl::OkStatus();
  return absl::InvalidArgumentError(
      absl::StrCat("reconstruct: ", out.size(), " floats for dimension ", dim));
}

absl::Status IdNotInIndex(int64_t id) {
  return absl::NotFoundError(absl::StrCat("id ", id, " is not in the index"));
}

std::vector<size_t> AllowedCandidateRows(const IdFilter& filter,
                                         const std::unordered_map<int64_t, size_t>& row_of) {
  const std::vector<int64_t>& listed = *filter.Candidates();
  std::vector<size_t> rows;
  rows.reserve(listed.size());
  for (int64_t id : listed) {
    auto it = row_of.find(id);
    if (it != row_of.end() && filter.Allowed(id)) rows.push_back(it->second);
  }
  std::sort(rows.begin(), rows.end());
  return rows;
}

}  // namespace neodb::index
