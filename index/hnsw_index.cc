#include "index/hnsw_index.h"

#include <faiss/IndexFlat.h>
#include <faiss/IndexHNSW.h>

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "index/exact_search.h"
#include "index/faiss_checks.h"
#include "index/faiss_io.h"
#include "index/hnsw_walk.h"
#include "index/kernel_flat_storage.h"
#include "index/threads.h"

namespace neodb::index {
namespace {

// faiss::Index::idx_t in FAISS 1.7.3, faiss::idx_t from 1.7.4 on; int64_t in both.
using FaissIdx = decltype(faiss::Index::ntotal);

// Live positions the filter allows, in order.
std::vector<size_t> AllowedPositions(const WalkFilter& filter) {
  std::vector<size_t> out;
  for (size_t p = 0; p < filter.size; ++p) {
    if (filter.Allows(p)) out.push_back(p);
  }
  return out;
}

// The allowed share of live positions, from a deterministic stride sample.
double EstimateAllowedFraction(const WalkFilter& filter) {
  const size_t n = filter.size;
  const size_t samples = std::min<size_t>(n, 1024);
  size_t live = 0, allowed = 0;
  for (size_t i = 0; i < samples; ++i) {
    size_t p = i * n / samples;
    if (filter.dead[p]) continue;
    ++live;
    if (filter.Allows(p)) ++allowed;
  }
  return live == 0 ? 0.0 : static_cast<double>(allowed) / live;
}

faiss::MetricType FaissMetric(Metric m) {
  return m == Metric::kL2 ? faiss::METRIC_L2 : faiss::METRIC_INNER_PRODUCT;
}

}  // namespace

HnswIndex::HnswIndex(int dimension, int m, Metric metric, const HnswParams& params)
    : PositionedIndex(dimension, metric),
      m_(m),
      params_(params),
      exact_below_(params.exact_below >= 0 ? static_cast<size_t>(params.exact_below)
                                           : kHnswExactMaxFloats / dimension) {
  NEODB_CHECK(m >= 2 && params.ef_construction > 0 && params.ef_search > 0);
  index_ = std::make_unique<faiss::IndexHNSWFlat>(dimension, m, FaissMetric(metric));
  UseKernelStorage(index_.get());  // inserts on our kernel (index/kernel_flat_storage.h)
  index_->hnsw.efConstruction = params.ef_construction;
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
  RETURN_IF_ERROR(CheckAbsentLocked(ids));
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

void HnswIndex::RemoveAtLocked(size_t pos) {
  dead_[pos] = 1;
  ++dead_count_;
  id_to_pos_.erase(pos_to_id_[pos]);
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

absl::StatusOr<std::vector<std::vector<SearchHit>>> HnswIndex::SearchLocked(
    std::span<const float> q, int k, const IdFilter* filter, const SearchOptions& options) const {
  const size_t nq = q.size() / dim_;
  std::vector<std::vector<SearchHit>> out(nq);
  const size_t live = id_to_pos_.size();
  if (live == 0) return out;

  absl::Status status = CatchExceptions("hnsw search", [&] {
    // A filter that lists its candidates (a tenant's documents) small
    // enough for the exact path: score those rows alone, never the rest.
    if (const std::vector<int64_t>* listed = filter != nullptr ? filter->Candidates() : nullptr;
        listed != nullptr && (listed->size() < exact_below_ ||
                              listed->size() < kHnswExactFilterFraction * live)) {
      const std::vector<size_t> positions = AllowedCandidateRows(*filter, id_to_pos_);
      for (size_t i = 0; i < nq; ++i) out[i] = ExactLocked(&q[i * dim_], k, filter, &positions);
      return;
    }
    // Small index: exact is faster than the graph walk and exact.
    if (live < exact_below_) {
      for (size_t i = 0; i < nq; ++i) out[i] = ExactLocked(&q[i * dim_], k, filter, nullptr);
      return;
    }
    // From here on the filter is asked about many positions (the sample, a
    // graph walk, or every position): take its bitmap if it has one.
    WalkFilter walk_filter;
    walk_filter.size = pos_to_id_.size();
    walk_filter.dead = dead_.data();
    walk_filter.ids = pos_to_id_.data();
    walk_filter.filter = filter;
    walk_filter.bitmap = filter != nullptr ? filter->Dense() : nullptr;
    walk_filter.all_allowed = filter == nullptr && dead_count_ == 0 &&
                              static_cast<size_t>(index_->ntotal) == pos_to_id_.size();
    std::vector<size_t> allowed_positions;
    bool have_allowed = false;
    if (filter != nullptr) {
      const double fraction = EstimateAllowedFraction(walk_filter);
      if (fraction < kHnswExactFilterFraction || fraction * live < exact_below_) {
        allowed_positions = AllowedPositions(walk_filter);
        have_allowed = true;
        for (size_t i = 0; i < nq; ++i) {
          out[i] = ExactLocked(&q[i * dim_], k, filter, &allowed_positions);
        }
        return;
      }
    }
    // The walk's beam holds ef *allowed* nodes (hnsw_walk.h), so a filter
    // needs no wider beam than an unfiltered search of the same k.
    int ef = options.ef_search > 0 ? options.ef_search : params_.ef_search;
    ef = std::min(std::max(ef, k), kHnswMaxEfSearch);
    const float* xb = static_cast<const faiss::IndexFlat*>(index_->storage)->get_xb();
    WalkDistance dis(xb, dim_, metric_ == Metric::kL2, sq_norms_);
    std::unique_ptr<WalkScratch> scratch = TakeScratch();
    for (size_t i = 0; i < nq; ++i) {
      dis.SetQuery(&q[i * dim_]);
      // Distances: smaller is closer; scores: higher is better.
      for (const WalkHit& h : HnswWalk(index_->hnsw, dis, k, ef, walk_filter, scratch.get())) {
        out[i].push_back({pos_to_id_[h.pos], -h.distance});
      }
      // Guarantee: fewer than k hits only when fewer than k are allowed.
      if (out[i].size() < static_cast<size_t>(k) && out[i].size() < live) {
        if (!have_allowed) {
          allowed_positions = AllowedPositions(walk_filter);
          have_allowed = true;
        }
        if (allowed_positions.size() > out[i].size()) {
          out[i] = ExactLocked(&q[i * dim_], k, filter, &allowed_positions);
        }
      }
    }
    ReturnScratch(std::move(scratch));
  });
  RETURN_IF_ERROR(status);
  return out;
}

std::unique_ptr<WalkScratch> HnswIndex::TakeScratch() const {
  {
    absl::MutexLock lock(&scratch_mu_);
    if (!idle_scratch_.empty()) {
      std::unique_ptr<WalkScratch> s = std::move(idle_scratch_.back());
      idle_scratch_.pop_back();
      return s;
    }
  }
  return std::make_unique<WalkScratch>();
}

void HnswIndex::ReturnScratch(std::unique_ptr<WalkScratch> scratch) const {
  absl::MutexLock lock(&scratch_mu_);
  if (idle_scratch_.size() < kMaxIdleScratches) idle_scratch_.push_back(std::move(scratch));
}

absl::Status HnswIndex::ReconstructAtLocked(size_t pos, std::span<float> out) const {
  // IndexHNSWFlat keeps the full vectors in its flat storage: exact.
  return CatchExceptions("hnsw reconstruct", [&] {
    index_->reconstruct(static_cast<FaissIdx>(pos), out.data());
  });
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
  UseKernelStorage(hnsw);  // later inserts on our kernel, as a fresh index's
  absl::WriterMutexLock lock(&mu_);
  index_.reset(hnsw);
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
