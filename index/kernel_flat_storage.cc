#include "index/kernel_flat_storage.h"

#include <faiss/IndexHNSW.h>
#include <faiss/impl/DistanceComputer.h>

#include <memory>
#include <utility>

#include "common/status_macros.h"
#include "index/dot_kernel.h"

namespace neodb::index {
namespace {

// faiss::Index::idx_t in FAISS 1.7.3, faiss::idx_t from 1.7.4 on; int64_t in both.
using FaissIdx = decltype(faiss::Index::ntotal);

bool KernelMetric(faiss::MetricType m) {
  return m == faiss::METRIC_INNER_PRODUCT || m == faiss::METRIC_L2;
}

// One thread's computer (FAISS makes one per OpenMP thread); the rows and the
// query are borrowed from the storage and the caller.
class KernelDistance final : public faiss::FlatCodesDistanceComputer {
 public:
  KernelDistance(const float* xb, int dim, bool l2)
      : faiss::FlatCodesDistanceComputer(reinterpret_cast<const uint8_t*>(xb),
                                         static_cast<size_t>(dim) * sizeof(float)),
        xb_(xb),
        dim_(dim),
        l2_(l2) {}

  void set_query(const float* x) override { q_ = x; }

  float distance_to_code(const uint8_t* code) override {
    return Distance(q_, reinterpret_cast<const float*>(code));
  }

  float symmetric_dis(FaissIdx i, FaissIdx j) override {
    return Distance(xb_ + static_cast<size_t>(i) * dim_, xb_ + static_cast<size_t>(j) * dim_);
  }

 private:
  float Distance(const float* a, const float* b) const {
    return l2_ ? L2SqrKernel(a, b, dim_) : DotKernel(a, b, dim_);
  }

  const float* xb_;
  const int dim_;
  const bool l2_;
  const float* q_ = nullptr;
};

}  // namespace

KernelFlatStorage::KernelFlatStorage(int dim, faiss::MetricType metric)
    : faiss::IndexFlat(dim, metric) {
  NEODB_CHECK(KernelMetric(metric));
}

faiss::FlatCodesDistanceComputer* KernelFlatStorage::get_FlatCodesDistanceComputer() const {
  return new KernelDistance(get_xb(), d, metric_type == faiss::METRIC_L2);
}

void UseKernelStorage(faiss::IndexHNSWFlat* index) {
  auto* flat = dynamic_cast<faiss::IndexFlat*>(index->storage);
  if (flat == nullptr || !index->own_fields || !KernelMetric(flat->metric_type) ||
      dynamic_cast<KernelFlatStorage*>(flat) != nullptr) {
    return;
  }
  auto kernel = std::make_unique<KernelFlatStorage>(flat->d, flat->metric_type);
  kernel->metric_arg = flat->metric_arg;
  kernel->codes = std::move(flat->codes);
  kernel->ntotal = flat->ntotal;
  flat->ntotal = 0;
  delete flat;
  index->storage = kernel.release();
}

}  // namespace neodb::index
