#include "index/hnsw_index.h"

#include <faiss/IndexFlat.h>
#include <faiss/IndexHNSW.h>
#include <faiss/impl/AuxIndexStructures.h>
#include <faiss/impl/DistanceComputer.h>
#include <faiss/impl/IDSelector.h>
#include <faiss/utils/Heap.h>

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "index/dot_kernel.h"
#include "index/exact_search.h"
#include "index/faiss_checks.h"
#include "index/faiss_io.h"
#include "index/threads.h"

namespace neodb::index {
namespace {

using FaissIdx = faiss::Index::idx_t;  // int64_t in FAISS 1.7.3

// Which positions a search may return: live ones the caller's filter allows.
// Through the filter's bitmap when it has one: a bit test per visited node
// instead of a virtual call and a metadata lookup.
struct PositionSelector : faiss::IDSelector {
  PositionSelector(const std::vector<int64_t>& pos_to_id, const std::vector<uint8_t>& dead,
                   const IdFilter* filter, const IdBitmap* bitmap)
      : pos_to_id(pos_to_id), dead(dead), filter(filter), bitmap(bitmap) {}
  // REQUIRES: pos < dead.size().
  bool Allows(size_t pos) const {
    if (dead[pos]) return false;
    if (bitmap != nullptr) return bitmap->Test(pos_to_id[pos]);
    return filter == nullptr || filter->Allowed(pos_to_id[pos]);
  }
  bool is_member(FaissIdx pos) const override {
    return pos >= 0 && static_cast<size_t>(pos) < dead.size() && Allows(pos);
  }
  const std::vector<int64_t>& pos_to_id;
  const std::vector<uint8_t>& dead;
  const IdFilter* filter;
  const IdBitmap* bitmap;
};

// The graph walk's distances with our dot kernel (AVX-512/AVX2 chosen at run
// time, index/dot_kernel.h) instead of FAISS's: Debian's static FAISS runs
// its scalar reference loop, a third of a filtered query's time at 256-d.
// Smaller is closer, as HNSW wants: -<q, x> for inner product (and cosine,
// over normalised rows), ||x||^2 - 2<q, x> + ||q||^2 for L2 (row norms from
// the index's cache).
class KernelDistance : public faiss::DistanceComputer {
 public:
  KernelDistance(const float* xb, int dim, Metric metric, const std::vector<float>& sq_norms)
      : xb_(xb), dim_(dim), l2_(metric == Metric::kL2), sq_norms_(sq_norms) {}
  void set_query(const float* x) override {
    q_ = x;
    q_norm_ = l2_ ? SquaredNorm(x, dim_) : 0;
  }
  float operator()(idx_t i) override {
    float dot;
    DotRows(xb_ + i * dim_, 1, dim_, q_, &dot);
    return l2_ ? std::max(0.0f, Norm(i) - 2 * dot + q_norm_) : -dot;
  }
  float symmetric_dis(idx_t i, idx_t j) override {
    float dot;
    DotRows(xb_ + i * dim_, 1, dim_, xb_ + j * dim_, &dot);
    return l2_ ? std::max(0.0f, Norm(i) - 2 * dot + Norm(j)) : -dot;
  }

 private:
  const float* xb_;
  const int dim_;
  const bool l2_;
  const std::vector<float>& sq_norms_;
  const float* q_ = nullptr;
  float q_norm_ = 0;

  // The cache covers the rows of successful Adds; a failed Add can leave
  // rows behind it in the graph.
  float Norm(idx_t i) const {
    return static_cast<size_t>(i) < sq_norms_.size() ? sq_norms_[i]
                                                     : SquaredNorm(xb_ + i * dim_, dim_);
  }
};

std::vector<size_t> AllowedPositions(const PositionSelector& sel) {
  std::vector<size_t> out;
  for (size_t p = 0; p < sel.dead.size(); ++p) {
    if (sel.Allows(p)) out.push_back(p);
  }
  return out;
}

// The allowed share of live positions, from a deterministic stride sample.
double EstimateAllowedFraction(const PositionSelector& sel) {
  const size_t n = sel.dead.size();
  const size_t samples = std::min<size_t>(n, 1024);
  size_t live = 0, allowed = 0;
  for (size_t i = 0; i < samples; ++i) {
    size_t p = i * n / samples;
    if (sel.dead[p]) continue;
    ++live;
    if (sel.Allows(p)) ++allowed;
  }
  return live == 0 ? 0.0 : static_cast<double>(allowed) / live;
}

faiss::MetricType FaissMetric(Metric m) {
  return m == Metric::kL2 ? faiss::METRIC_L2 : faiss::METRIC_INNER_PRODUCT;
}

}  // namespace

HnswIndex::HnswIndex(int dimension, int m, Metric metric, const HnswParams& params)
    : dim_(dimension),
      m_(m),
      metric_(metric),
      params_(params),
      exact_below_(params.exact_below >= 0 ? static_cast<size_t>(params.exact_below)
                                           : kHnswExactMaxFloats / dimension) {
  NEODB_CHECK(dimension > 0 && m >= 2 && params.ef_construction > 0 && params.ef_search > 0);
  index_ = std::make_unique<faiss::IndexHNSWFlat>(dimension, m, FaissMetric(metric));
  index_->hnsw.efConstruction = params.ef_construction;
  // FAISS 1.7.3 sizes the search beam from this member and only reads
  // SearchParametersHNSW::efSearch for its stopping rule, so the member holds
  // the largest beam we allow and each search passes its own efSearch.
  index_->hnsw.efSearch = kHnswMaxEfSearch;
}

HnswIndex::~HnswIndex() = default;

std::string HnswIndex::spec() const {
  // Canonical: only what differs from the defaults.
  std::string s = absl::StrCat("HNSW", m_);
  const HnswParams defaults;
  if (params_.ef_construction != defaults.ef_construction) {
    absl::StrAppend(&s, ",efConstruction=", params_.ef_construction);
  }
  if (params_.ef_search != defaults.ef_search) absl::StrAppend(&s, ",efSearch=", params_.ef_search);
  if (params_.exact_below != defaults.exact_below) {
    absl::StrAppend(&s, ",exactBelow=", params_.exact_below);
  }
  return s;
}

absl::Status HnswIndex::Add(std::span<const int64_t> ids, std::span<const float> vectors) {
  RETURN_IF_ERROR(ValidateAddArgs(ids, vectors, dim_));
  std::vector<float> v(vectors.begin(), vectors.end());
  if (metric_ == Metric::kCosine) NormalizeRows(v.data(), ids.size(), dim_);
  absl::WriterMutexLock lock(&mu_);
  for (int64_t id : ids) {
    if (id_to_pos_.count(id)) {
      return absl::AlreadyExistsError(absl::StrCat("id ", id, " is already in the index"));
    }
  }
  const size_t first = pos_to_id_.size();
  RETURN_IF_ERROR(CatchExceptions("hnsw add", [&] {
    pos_to_id_.reserve(first + ids.size());
    dead_.reserve(first + ids.size());
    ScopedOmpThreads threads(IndexBuildThreads());
    index_->add(static_cast<FaissIdx>(ids.size()), v.data());
  }));
  for (size_t i = 0; i < ids.size(); ++i) {
    pos_to_id_.push_back(ids[i]);
    dead_.push_back(0);
    id_to_pos_[ids[i]] = first + i;
    if (metric_ == Metric::kL2) sq_norms_.push_back(SquaredNorm(&v[i * dim_], dim_));
  }
  return absl::OkStatus();
}

absl::StatusOr<size_t> HnswIndex::Remove(std::span<const int64_t> ids) {
  absl::WriterMutexLock lock(&mu_);
  size_t removed = 0;
  for (int64_t id : ids) {
    auto it = id_to_pos_.find(id);
    if (it == id_to_pos_.end()) continue;
    dead_[it->second] = 1;
    ++dead_count_;
    id_to_pos_.erase(it);
    ++removed;
  }
  return removed;
}

std::vector<SearchHit> HnswIndex::ExactLocked(const float* query, int k, const IdFilter* filter,
                                              const std::vector<size_t>* positions) const {
  std::vector<SearchHit> out;
  if (positions == nullptr) {
    const float* xb = static_cast<const faiss::IndexFlat*>(index_->storage)->get_xb();
    std::function<bool(size_t)> allowed = [&](size_t p) {
      return !dead_[p] && (filter == nullptr || filter->Allowed(pos_to_id_[p]));
    };
    auto rows = ExactTopK(xb, pos_to_id_.size(), dim_, sq_norms_, metric_, query, 1, k, allowed);
    for (const RowHit& h : rows[0]) out.push_back({pos_to_id_[h.row], h.score});
    return out;
  }
  const float* xb = static_cast<const faiss::IndexFlat*>(index_->storage)->get_xb();
  for (const RowHit& h : ExactTopKRows(xb, dim_, *positions, sq_norms_, metric_, query, k)) {
    out.push_back({pos_to_id_[h.row], h.score});
  }
  return out;
}

absl::StatusOr<std::vector<std::vector<SearchHit>>> HnswIndex::SearchImpl(
    std::span<const float> queries, int k, const IdFilter* filter,
    const SearchOptions& options) const {
  RETURN_IF_ERROR(ValidateSearchArgs(queries, k, dim_));
  const size_t nq = queries.size() / dim_;
  std::vector<float> q(queries.begin(), queries.end());
  if (metric_ == Metric::kCosine) NormalizeRows(q.data(), nq, dim_);
  absl::ReaderMutexLock lock(&mu_);
  std::vector<std::vector<SearchHit>> out(nq);
  const size_t live = id_to_pos_.size();
  if (live == 0) return out;

  absl::Status status = CatchExceptions("hnsw search", [&] {
    // Small index: exact is faster than the graph walk and exact.
    if (live < exact_below_) {
      for (size_t i = 0; i < nq; ++i) out[i] = ExactLocked(&q[i * dim_], k, filter, nullptr);
      return;
    }
    // From here on the filter is asked about many positions (the sample, a
    // graph walk, or every position): take its bitmap if it has one.
    PositionSelector sel(pos_to_id_, dead_, filter, filter != nullptr ? filter->Dense() : nullptr);
    double fraction = 1.0;
    std::vector<size_t> allowed_positions;
    bool have_allowed = false;
    if (filter != nullptr) {
      fraction = EstimateAllowedFraction(sel);
      if (fraction < kHnswExactFilterFraction || fraction * live < exact_below_) {
        allowed_positions = AllowedPositions(sel);
        have_allowed = true;
        for (size_t i = 0; i < nq; ++i) {
          out[i] = ExactLocked(&q[i * dim_], k, filter, &allowed_positions);
        }
        return;
      }
    }
    int ef = options.ef_search > 0 ? options.ef_search : params_.ef_search;
    ef = std::max(ef, k);
    if (fraction < 1.0) ef = static_cast<int>(ef / std::max(fraction, 0.01));
    ef = std::min(ef, kHnswMaxEfSearch);
    faiss::SearchParametersHNSW params;
    params.efSearch = ef;
    // Only pass a selector when something must be excluded: it costs a
    // virtual call per visited node.
    params.sel = (filter != nullptr || dead_count_ > 0) ? &sel : nullptr;
    // What IndexHNSW::search does per query, with our distances: descend the
    // upper levels, walk level 0, and sort the k-heap. One thread (see
    // index/threads.h).
    std::vector<float> distances(nq * k);
    std::vector<FaissIdx> labels(nq * k);
    const float* xb = static_cast<const faiss::IndexFlat*>(index_->storage)->get_xb();
    KernelDistance dis(xb, dim_, metric_, sq_norms_);
    for (size_t i = 0; i < nq; ++i) {
      faiss::VisitedTable visited(static_cast<int>(index_->ntotal));
      float* d = &distances[i * k];
      FaissIdx* l = &labels[i * k];
      dis.set_query(&q[i * dim_]);
      faiss::maxheap_heapify(k, d, l);
      index_->hnsw.search(dis, k, l, d, visited, &params);
      faiss::maxheap_reorder(k, d, l);
    }
    for (size_t i = 0; i < nq; ++i) {
      for (int j = 0; j < k; ++j) {
        FaissIdx pos = labels[i * k + j];
        // < 0: fewer than k results; beyond pos_to_id_: vectors of a failed Add.
        if (pos < 0 || static_cast<size_t>(pos) >= pos_to_id_.size()) continue;
        // Distances: smaller is closer (KernelDistance); scores: higher is better.
        out[i].push_back({pos_to_id_[pos], -distances[i * k + j]});
      }
      // Guarantee: fewer than k hits only when fewer than k are allowed.
      if (out[i].size() < static_cast<size_t>(k) && out[i].size() < live) {
        if (!have_allowed) {
          allowed_positions = AllowedPositions(sel);
          have_allowed = true;
        }
        if (allowed_positions.size() > out[i].size()) {
          out[i] = ExactLocked(&q[i * dim_], k, filter, &allowed_positions);
        }
      }
    }
  });
  RETURN_IF_ERROR(status);
  return out;
}

size_t HnswIndex::size() const {
  absl::ReaderMutexLock lock(&mu_);
  return id_to_pos_.size();
}

bool HnswIndex::Contains(int64_t id) const {
  absl::ReaderMutexLock lock(&mu_);
  return id_to_pos_.count(id) > 0;
}

std::vector<int64_t> HnswIndex::Ids() const {
  absl::ReaderMutexLock lock(&mu_);
  return SortedIds(id_to_pos_);
}

bool HnswIndex::NeedsRebuild() const {
  absl::ReaderMutexLock lock(&mu_);
  return dead_count_ > kRebuildTombstoneFraction * pos_to_id_.size();
}

std::string HnswIndex::DebugString() const {
  absl::ReaderMutexLock lock(&mu_);
  return absl::StrCat(spec(), ": ", id_to_pos_.size(), " live, ", dead_count_, " tombstones, dim ",
                      dim_, ", ", std::string(MetricName(metric_)));
}

absl::StatusOr<std::string> HnswIndex::Serialize() const {
  ByteWriter w;
  WriteIndexHeader(&w, spec(), dim_, metric_);
  absl::ReaderMutexLock lock(&mu_);
  RETURN_IF_ERROR(WriteFaissIndex(*index_, "hnsw serialize", &w));
  w.Vec(pos_to_id_);
  w.Vec(dead_);
  return std::move(w.out());
}

absl::Status HnswIndex::DeserializeBody(ByteReader* r) {
  std::string faiss_bytes;
  std::vector<int64_t> pos_to_id;
  std::vector<uint8_t> dead;
  if (!r->Str(&faiss_bytes) || !r->Vec(&pos_to_id) || !r->Vec(&dead) ||
      dead.size() != pos_to_id.size()) {
    return absl::DataLossError("hnsw index payload is truncated or inconsistent");
  }
  // FAISS trusts its input (lengths, neighbour ids): check first.
  RETURN_IF_ERROR(CheckFaissHnswFlat(faiss_bytes));
  ASSIGN_OR_RETURN(std::unique_ptr<faiss::Index> loaded,
                   ReadFaissIndex(faiss_bytes, "hnsw deserialize"));
  auto* hnsw = dynamic_cast<faiss::IndexHNSWFlat*>(loaded.get());
  if (hnsw == nullptr || hnsw->d != dim_ || hnsw->metric_type != FaissMetric(metric_) ||
      static_cast<size_t>(hnsw->ntotal) != pos_to_id.size() ||
      dynamic_cast<faiss::IndexFlat*>(hnsw->storage) == nullptr) {
    return absl::DataLossError("hnsw index payload does not match its header");
  }
  std::unordered_map<int64_t, size_t> id_to_pos;
  size_t dead_count = 0;
  for (size_t p = 0; p < pos_to_id.size(); ++p) {
    if (dead[p] > 1) return absl::DataLossError("hnsw tombstone flag is not 0/1");
    if (dead[p]) {
      ++dead_count;
      continue;
    }
    if (pos_to_id[p] < 0 || !id_to_pos.emplace(pos_to_id[p], p).second) {
      return absl::DataLossError("hnsw payload has a negative or repeated live id");
    }
  }
  loaded.release();
  absl::WriterMutexLock lock(&mu_);
  index_.reset(hnsw);
  index_->hnsw.efSearch = kHnswMaxEfSearch;  // see the constructor
  pos_to_id_ = std::move(pos_to_id);
  dead_ = std::move(dead);
  dead_count_ = dead_count;
  id_to_pos_ = std::move(id_to_pos);
  sq_norms_.clear();
  if (metric_ == Metric::kL2) {
    const float* xb = static_cast<const faiss::IndexFlat*>(index_->storage)->get_xb();
    for (size_t p = 0; p < pos_to_id_.size(); ++p)
      sq_norms_.push_back(SquaredNorm(xb + p * dim_, dim_));
  }
  return absl::OkStatus();
}

}  // namespace neodb::index
