#include "index/flat_index.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "index/exact_search.h"

namespace neodb::index {

FlatIndex::FlatIndex(int dimension, Metric metric) : PositionedIndex(dimension, metric) {}

absl::Status FlatIndex::Add(std::span<const int64_t> ids, std::span<const float> vectors) {
  RETURN_IF_ERROR(ValidateAddArgs(ids, vectors, dim_));
  absl::WriterMutexLock lock(&mu_);
  RETURN_IF_ERROR(CheckAbsentLocked(ids));
  return CatchExceptions("flat add", [&] {
    const size_t first = ids_.size();
    data_.insert(data_.end(), vectors.begin(), vectors.end());
    if (metric_ == Metric::kCosine) NormalizeRows(data_.data() + first * dim_, ids.size(), dim_);
    for (size_t i = 0; i < ids.size(); ++i) {
      ids_.push_back(ids[i]);
      id_to_pos_[ids[i]] = first + i;
      if (metric_ == Metric::kL2)
        sq_norms_.push_back(SquaredNorm(data_.data() + (first + i) * dim_, dim_));
    }
  });
}

void FlatIndex::RemoveAtLocked(size_t row) {
  const size_t last = ids_.size() - 1;
  id_to_pos_.erase(ids_[row]);
  if (row != last) {
    std::copy_n(data_.data() + last * dim_, dim_, data_.data() + row * dim_);
    ids_[row] = ids_[last];
    id_to_pos_[ids_[row]] = row;
    if (metric_ == Metric::kL2) sq_norms_[row] = sq_norms_[last];
  }
  ids_.pop_back();
  data_.resize(ids_.size() * dim_);
  if (metric_ == Metric::kL2) sq_norms_.pop_back();
}

absl::StatusOr<std::vector<std::vector<SearchHit>>> FlatIndex::SearchLocked(
    std::span<const float> q, int k, const IdFilter* filter, const SearchOptions& options) const {
  const size_t nq = q.size() / dim_;
  std::function<bool(size_t)> allowed;
  if (filter != nullptr) allowed = [&](size_t row) { return filter->Allowed(ids_[row]); };
  std::vector<std::vector<SearchHit>> out(nq);
  // A filter that lists its candidates (a tenant's documents): score those
  // rows alone instead of testing every row.
  if (const std::vector<int64_t>* listed = filter != nullptr ? filter->Candidates() : nullptr;
      listed != nullptr && listed->size() < ids_.size()) {
    const std::vector<size_t> rows = AllowedCandidateRows(*filter, id_to_pos_);
    RETURN_IF_ERROR(CatchExceptions("flat search", [&] {
      for (size_t i = 0; i < nq; ++i) {
        for (const RowHit& h :
             ExactTopKRows(data_.data(), dim_, rows, sq_norms_, metric_, &q[i * dim_], k)) {
          out[i].push_back({ids_[h.row], h.score});
        }
      }
    }));
    return out;
  }
  RETURN_IF_ERROR(CatchExceptions("flat search", [&] {
    auto rows =
        ExactTopK(data_.data(), ids_.size(), dim_, sq_norms_, metric_, q.data(), nq, k, allowed);
    for (size_t i = 0; i < nq; ++i) {
      out[i].reserve(rows[i].size());
      for (const RowHit& h : rows[i]) out[i].push_back({ids_[h.row], h.score});
    }
  }));
  return out;
}

absl::Status FlatIndex::ReconstructAtLocked(size_t row, std::span<float> out) const {
  std::copy_n(data_.data() + row * dim_, dim_, out.data());
  return absl::OkStatus();
}

std::string FlatIndex::DebugString() const {
  return absl::StrCat("Flat (exact, BLAS) ", size(), " vectors, dim ", dim_, ", ",
                      std::string(MetricName(metric_)));
}

void FlatIndex::SerializeBody(ByteWriter* w) const {
  absl::ReaderMutexLock lock(&mu_);
  w->Vec(ids_);
  w->Vec(data_);
}

absl::StatusOr<std::string> FlatIndex::Serialize() const {
  ByteWriter w;
  WriteIndexHeader(&w, spec(), dim_, metric_);
  SerializeBody(&w);
  return std::move(w.out());
}

absl::Status FlatIndex::DeserializeBody(ByteReader* r) {
  std::vector<int64_t> ids;
  std::vector<float> data;
  if (!r->Vec(&ids) || !r->Vec(&data) || data.size() != ids.size() * dim_) {
    return absl::DataLossError("flat index payload is truncated or inconsistent");
  }
  std::unordered_map<int64_t, size_t> id_to_pos;
  id_to_pos.reserve(ids.size());
  for (size_t i = 0; i < ids.size(); ++i) {
    if (ids[i] < 0 || !id_to_pos.emplace(ids[i], i).second) {
      return absl::DataLossError("flat index payload has a negative or repeated id");
    }
  }
  absl::WriterMutexLock lock(&mu_);
  ids_ = std::move(ids);
  data_ = std::move(data);
  id_to_pos_ = std::move(id_to_pos);
  sq_norms_.clear();
  if (metric_ == Metric::kL2) {
    for (size_t i = 0; i < ids_.size(); ++i)
      sq_norms_.push_back(SquaredNorm(&data_[i * dim_], dim_));
  }
  return absl::OkStatus();
}

void FlatIndex::CopyOut(std::vector<int64_t>* ids, std::vector<float>* vectors) const {
  absl::ReaderMutexLock lock(&mu_);
  *ids = ids_;
  *vectors = data_;
}

void FlatIndex::Clear() {
  absl::WriterMutexLock lock(&mu_);
  ids_.clear();
  data_.clear();
  sq_norms_.clear();
  id_to_pos_.clear();
}

}  // namespace neodb::index
