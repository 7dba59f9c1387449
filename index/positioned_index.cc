#include "index/positioned_index.h"

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "index/index_util.h"

namespace neodb::index {

PositionedIndex::PositionedIndex(int dimension, Metric metric)
    : dim_(dimension), metric_(metric) {
  NEODB_CHECK(dimension > 0);
}

absl::StatusOr<size_t> PositionedIndex::Remove(std::span<const int64_t> ids) {
  absl::WriterMutexLock lock(&mu_);
  size_t removed = 0;
  for (int64_t id : ids) {
    auto it = id_to_pos_.find(id);
    if (it == id_to_pos_.end()) continue;
    RemoveAtLocked(it->second);
    ++removed;
  }
  return removed;
}

size_t PositionedIndex::size() const {
  absl::ReaderMutexLock lock(&mu_);
  return id_to_pos_.size();
}

bool PositionedIndex::Contains(int64_t id) const {
  absl::ReaderMutexLock lock(&mu_);
  return id_to_pos_.count(id) > 0;
}

std::vector<int64_t> PositionedIndex::Ids() const {
  absl::ReaderMutexLock lock(&mu_);
  return SortedIds(id_to_pos_);
}

absl::Status PositionedIndex::Reconstruct(int64_t id, std::span<float> out) const {
  RETURN_IF_ERROR(ValidateReconstructArgs(out, dim_));
  absl::ReaderMutexLock lock(&mu_);
  auto it = id_to_pos_.find(id);
  if (it == id_to_pos_.end()) return IdNotInIndex(id);
  return ReconstructAtLocked(it->second, out);
}

absl::StatusOr<std::vector<std::vector<SearchHit>>> PositionedIndex::SearchImpl(
    std::span<const float> queries, int k, const IdFilter* filter,
    const SearchOptions& options) const {
  ASSIGN_OR_RETURN(const std::vector<float> q, SearchQueries(queries, k, dim_, metric_));
  absl::ReaderMutexLock lock(&mu_);
  return SearchLocked(q, k, filter, options);
}

absl::Status PositionedIndex::CheckAbsentLocked(std::span<const int64_t> ids) const {
  for (int64_t id : ids) {
    if (id_to_pos_.count(id)) {
      return absl::AlreadyExistsError(absl::StrCat("id ", id, " is already in the index"));
    }
  }
  return absl::OkStatus();
}

}  // namespace neodb::index
