#include "index/ivfpq_index.h"

#include <faiss/IndexFlat.h>
#include <faiss/IndexIVFPQ.h>
#include <faiss/impl/IDSelector.h>

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "index/exact_search.h"
#include "index/faiss_checks.h"
#include "index/faiss_io.h"
#include "index/threads.h"

namespace neodb::index {
namespace {

// faiss::Index::idx_t in FAISS 1.7.3, faiss::idx_t from 1.7.4 on; int64_t in both.
using FaissIdx = decltype(faiss::Index::ntotal);

// The caller's filter inside FAISS, through its bitmap when it has one: a list
// scan asks about every id it scans.
struct FilterSelector : faiss::IDSelector {
  const IdFilter* filter;
  const IdBitmap* bitmap;
  bool Allows(int64_t id) const {
    return bitmap != nullptr ? bitmap->Test(id) : filter->Allowed(id);
  }
  bool is_member(FaissIdx id) const override { return Allows(id); }
};

faiss::MetricType FaissMetric(Metric m) {
  return m == Metric::kL2 ? faiss::METRIC_L2 : faiss::METRIC_INNER_PRODUCT;
}

}  // namespace

IvfPqIndex::IvfPqIndex(int dimension, int nlist, int m, Metric metric, int nprobe)
    : dim_(dimension),
      nlist_(nlist),
      m_(m),
      metric_(metric),
      nprobe_(nprobe),
      buffer_(dimension, metric) {
  NEODB_CHECK(dimension > 0 && nlist > 0 && m > 0 && dimension % m == 0 && nprobe >= 0);
}

IvfPqIndex::~IvfPqIndex() = default;

std::string IvfPqIndex::spec() const {
  std::string s = absl::StrCat("IVF", nlist_, ",PQ", m_);
  if (nprobe_ > 0) absl::StrAppend(&s, ",nprobe=", nprobe_);
  return s;
}

size_t IvfPqIndex::TrainThreshold() const {
  return std::max<size_t>(39 * static_cast<size_t>(nlist_), 256);
}

absl::Status IvfPqIndex::Reconstruct(int64_t id, std::span<float> out) const {
  absl::ReaderMutexLock lock(&mu_);
  if (ivf_ == nullptr) return buffer_.Reconstruct(id, out);  // exact until trained
  if (live_.count(id) == 0) return IdNotInIndex(id);
  // The lists keep m 8-bit product codes per vector: a decoded code is an
  // approximation whose error depends on the data, so no tolerance would
  // tell a wrong entry from quantisation noise.
  return absl::UnimplementedError("IVF-PQ keeps product codes, not the vectors");
}

bool IvfPqIndex::trained() const {
  absl::ReaderMutexLock lock(&mu_);
  return ivf_ != nullptr;
}

absl::Status IvfPqIndex::TrainLocked() {
  std::vector<int64_t> ids;
  std::vector<float> vectors;  // already normalised for cosine by the buffer
  buffer_.CopyOut(&ids, &vectors);
  std::unique_ptr<faiss::IndexIVFPQ> ivf;
  RETURN_IF_ERROR(CatchExceptions("ivfpq train", [&] {
    ScopedOmpThreads threads(IndexBuildThreads());
    auto* quantizer = new faiss::IndexFlat(dim_, FaissMetric(metric_));
    ivf = std::make_unique<faiss::IndexIVFPQ>(quantizer, dim_, nlist_, m_, 8, FaissMetric(metric_));
    ivf->own_fields = true;
    ivf->cp.verbose = false;
    ivf->verbose = false;
    ivf->train(static_cast<FaissIdx>(ids.size()), vectors.data());
    ivf->add_with_ids(static_cast<FaissIdx>(ids.size()), vectors.data(), ids.data());
  }));
  ivf_ = std::move(ivf);
  live_.clear();
  live_.insert(ids.begin(), ids.end());
  buffer_.Clear();
  return absl::OkStatus();
}

absl::Status IvfPqIndex::Add(std::span<const int64_t> ids, std::span<const float> vectors) {
  RETURN_IF_ERROR(ValidateAddArgs(ids, vectors, dim_));
  absl::WriterMutexLock lock(&mu_);
  if (ivf_ == nullptr) {
    RETURN_IF_ERROR(buffer_.Add(ids, vectors));
    if (buffer_.size() >= TrainThreshold()) return TrainLocked();
    return absl::OkStatus();
  }
  for (int64_t id : ids) {
    if (live_.count(id)) {
      return absl::AlreadyExistsError(absl::StrCat("id ", id, " is already in the index"));
    }
  }
  std::vector<float> v(vectors.begin(), vectors.end());
  if (metric_ == Metric::kCosine) NormalizeRows(v.data(), ids.size(), dim_);
  RETURN_IF_ERROR(CatchExceptions("ivfpq add", [&] {
    ScopedOmpThreads threads(IndexBuildThreads());
    ivf_->add_with_ids(static_cast<FaissIdx>(ids.size()), v.data(), ids.data());
  }));
  live_.insert(ids.begin(), ids.end());
  return absl::OkStatus();
}

absl::StatusOr<size_t> IvfPqIndex::Remove(std::span<const int64_t> ids) {
  absl::WriterMutexLock lock(&mu_);
  if (ivf_ == nullptr) return buffer_.Remove(ids);
  std::vector<FaissIdx> present;
  for (int64_t id : ids) {
    if (live_.count(id)) present.push_back(id);
  }
  std::sort(present.begin(), present.end());
  present.erase(std::unique(present.begin(), present.end()), present.end());
  if (present.empty()) return 0;
  RETURN_IF_ERROR(CatchExceptions("ivfpq remove", [&] {
    ScopedOmpThreads threads(IndexBuildThreads());
    faiss::IDSelectorBatch sel(present.size(), present.data());
    ivf_->remove_ids(sel);
  }));
  for (auto id : present) live_.erase(id);
  return present.size();
}

absl::StatusOr<std::vector<std::vector<SearchHit>>> IvfPqIndex::SearchImpl(
    std::span<const float> queries, int k, const IdFilter* filter,
    const SearchOptions& options) const {
  RETURN_IF_ERROR(ValidateSearchArgs(queries, k, dim_));
  absl::ReaderMutexLock lock(&mu_);
  if (ivf_ == nullptr) return buffer_.Search(queries, k, filter, options);
  const size_t nq = queries.size() / dim_;
  std::vector<float> q(queries.begin(), queries.end());
  if (metric_ == Metric::kCosine) NormalizeRows(q.data(), nq, dim_);
  std::vector<std::vector<SearchHit>> out(nq);
  if (live_.empty()) return out;
  FilterSelector sel;
  sel.filter = filter;
  sel.bitmap = filter != nullptr ? filter->Dense() : nullptr;
  auto run = [&](const float* queries_ptr, size_t n, size_t nprobe,
                 std::vector<std::vector<SearchHit>>* results, size_t first) {
    faiss::SearchParametersIVF params;
    params.nprobe = nprobe;
    params.sel = filter != nullptr ? &sel : nullptr;
    std::vector<float> distances(n * k);
    std::vector<FaissIdx> labels(n * k);
    ivf_->search(static_cast<FaissIdx>(n), queries_ptr, k, distances.data(), labels.data(),
                 &params);
    for (size_t i = 0; i < n; ++i) {
      auto& hits = (*results)[first + i];
      hits.clear();
      for (int j = 0; j < k; ++j) {
        FaissIdx id = labels[i * k + j];
        if (id < 0) continue;
        float d = distances[i * k + j];
        hits.push_back({id, metric_ == Metric::kL2 ? -d : d});
      }
    }
  };
  size_t nprobe = options.nprobe > 0 ? static_cast<size_t>(options.nprobe)
                  : nprobe_ > 0      ? static_cast<size_t>(nprobe_)
                                     : std::max<size_t>(8, static_cast<size_t>(nlist_) / 16);
  nprobe = std::min<size_t>(nprobe, nlist_);
  RETURN_IF_ERROR(CatchExceptions("ivfpq search", [&] {
    ScopedOmpThreads threads(1);  // see index/threads.h
    run(q.data(), nq, nprobe, &out, 0);
    size_t allowed = SIZE_MAX;  // computed lazily
    for (size_t i = 0; i < nq; ++i) {
      if (out[i].size() >= static_cast<size_t>(k) || nprobe >= static_cast<size_t>(nlist_))
        continue;
      if (allowed == SIZE_MAX) {
        allowed = 0;
        for (int64_t id : live_) allowed += (filter == nullptr || sel.Allows(id)) ? 1 : 0;
      }
      if (allowed > out[i].size()) run(&q[i * dim_], 1, nlist_, &out, i);
    }
  }));
  return out;
}

size_t IvfPqIndex::size() const {
  absl::ReaderMutexLock lock(&mu_);
  return ivf_ == nullptr ? buffer_.size() : live_.size();
}

bool IvfPqIndex::Contains(int64_t id) const {
  absl::ReaderMutexLock lock(&mu_);
  return ivf_ == nullptr ? buffer_.Contains(id) : live_.count(id) > 0;
}

std::vector<int64_t> IvfPqIndex::Ids() const {
  absl::ReaderMutexLock lock(&mu_);
  if (ivf_ == nullptr) return buffer_.Ids();
  return SortedIds(live_);
}

std::string IvfPqIndex::DebugString() const {
  absl::ReaderMutexLock lock(&mu_);
  if (ivf_ == nullptr) {
    return absl::StrCat(spec(), ": untrained, ", buffer_.size(),
                        " vectors searched exactly (trains at ", TrainThreshold(), "), dim ", dim_);
  }
  return absl::StrCat(spec(), ": trained, ", live_.size(), " vectors, dim ", dim_, ", ",
                      std::string(MetricName(metric_)));
}

absl::StatusOr<std::string> IvfPqIndex::Serialize() const {
  ByteWriter w;
  WriteIndexHeader(&w, spec(), dim_, metric_);
  absl::ReaderMutexLock lock(&mu_);
  w.U8(ivf_ != nullptr ? 1 : 0);
  if (ivf_ == nullptr) {
    buffer_.SerializeBody(&w);
    return std::move(w.out());
  }
  RETURN_IF_ERROR(WriteFaissIndex(*ivf_, "ivfpq serialize", &w));
  std::vector<int64_t> ids(live_.begin(), live_.end());
  w.Vec(ids);
  return std::move(w.out());
}

absl::Status IvfPqIndex::DeserializeBody(ByteReader* r) {
  uint8_t trained;
  if (!r->U8(&trained) || trained > 1) return absl::DataLossError("ivfpq payload: bad state flag");
  absl::WriterMutexLock lock(&mu_);
  if (trained == 0) {
    ivf_.reset();
    live_.clear();
    return buffer_.DeserializeBody(r);
  }
  std::string faiss_bytes;
  std::vector<int64_t> ids;
  if (!r->Str(&faiss_bytes) || !r->Vec(&ids)) {
    return absl::DataLossError("ivfpq index payload is truncated");
  }
  // FAISS trusts its input (lengths, list sizes): check first.
  RETURN_IF_ERROR(
      CheckFaissIvfPq(faiss_bytes, dim_, static_cast<size_t>(nlist_), static_cast<size_t>(m_)));
  ASSIGN_OR_RETURN(std::unique_ptr<faiss::Index> loaded,
                   ReadFaissIndex(faiss_bytes, "ivfpq deserialize"));
  auto* ivf = dynamic_cast<faiss::IndexIVFPQ*>(loaded.get());
  std::unordered_set<int64_t> live(ids.begin(), ids.end());
  if (ivf == nullptr || ivf->d != dim_ || ivf->nlist != static_cast<size_t>(nlist_) ||
      ivf->pq.M != static_cast<size_t>(m_) || ivf->metric_type != FaissMetric(metric_) ||
      !ivf->is_trained || static_cast<size_t>(ivf->ntotal) != ids.size() ||
      live.size() != ids.size()) {
    return absl::DataLossError("ivfpq index payload does not match its header");
  }
  // Searches return the ids in the inverted lists: they must be exactly the
  // live ids recorded beside them, each once.
  size_t listed = 0;
  for (size_t l = 0; l < ivf->nlist; ++l) {
    const size_t n = ivf->invlists->list_size(l);
    faiss::InvertedLists::ScopedIds list_ids(ivf->invlists, l);
    for (size_t i = 0; i < n; ++i) {
      if (!live.count(list_ids[i])) {
        return absl::DataLossError("ivfpq inverted lists hold an id that is not live");
      }
    }
    listed += n;
  }
  if (listed != live.size()) {
    return absl::DataLossError("ivfpq inverted lists do not hold every live id once");
  }
  loaded.release();
  ivf_.reset(ivf);
  live_ = std::move(live);
  buffer_.Clear();
  return absl::OkStatus();
}

}  // namespace neodb::index
