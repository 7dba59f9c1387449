// KernelFlatStorage: the HNSW storage whose distance computer is neodb's
// kernel. Its distances agree with exact (double) sums within float rounding's
// bound, the swap keeps every vector and the file format, and inserts after
// the swap build a graph that finds what it holds.
#include "index/kernel_flat_storage.h"

#include <faiss/IndexHNSW.h>
#include <faiss/impl/DistanceComputer.h>
#include <faiss/impl/io.h>
#include <faiss/index_io.h>

#include <cfloat>
#include <cmath>
#include <cstring>
#include <memory>
#include <typeinfo>
#include <vector>

#include <gtest/gtest.h>

#include "tests/index/test_util.h"

namespace neodb::index {
namespace {

using testing::RandomVectors;

const bool kSingleThreaded = testing::UseSingleThreadedBuilds();

// Exact sum and sum of magnitudes of the terms, in double.
struct Exact {
  double value = 0;
  double magnitude = 0;
};

Exact ExactDistance(const float* a, const float* b, int dim, bool l2) {
  Exact e;
  for (int i = 0; i < dim; ++i) {
    const double t = l2 ? (double(a[i]) - b[i]) * (double(a[i]) - b[i]) : double(a[i]) * b[i];
    e.value += t;
    e.magnitude += std::fabs(t);
  }
  return e;
}

// A float sum of n terms is within n * eps * sum|terms| of the exact sum
// (plus one rounding of each term, hence n + 2).
void ExpectWithinRounding(float got, const Exact& want, int dim) {
  EXPECT_NEAR(got, want.value, (dim + 2) * FLT_EPSILON * want.magnitude);
}

std::vector<uint8_t> WriteIndex(const faiss::Index& index) {
  faiss::VectorIOWriter w;
  faiss::write_index(&index, &w);
  return w.data;
}

TEST(KernelFlatStorageTest, DistancesAgreeWithExactSums) {
  for (faiss::MetricType metric : {faiss::METRIC_INNER_PRODUCT, faiss::METRIC_L2}) {
    const bool l2 = metric == faiss::METRIC_L2;
    for (int dim : {7, 100, 384}) {
      SCOPED_TRACE(::testing::Message() << "l2 " << l2 << " dim " << dim);
      const int n = 40;
      const std::vector<float> x = RandomVectors(n, dim, 7 + dim);
      const std::vector<float> q = RandomVectors(3, dim, 11 + dim);
      KernelFlatStorage storage(dim, metric);
      storage.add(n, x.data());
      std::unique_ptr<faiss::DistanceComputer> dis(storage.get_distance_computer());
      for (int qi = 0; qi < 3; ++qi) {
        dis->set_query(&q[qi * dim]);
        for (int i = 0; i < n; ++i) {
          ExpectWithinRounding((*dis)(i), ExactDistance(&q[qi * dim], &x[i * dim], dim, l2), dim);
        }
      }
      for (int i = 0; i < n; i += 7) {
        for (int j = 0; j < n; j += 5) {
          ExpectWithinRounding(dis->symmetric_dis(i, j),
                               ExactDistance(&x[i * dim], &x[j * dim], dim, l2), dim);
        }
      }
    }
  }
}

TEST(KernelFlatStorageTest, SwapKeepsVectorsFileFormatAndSearch) {
  const int dim = 32, n = 600;
  const std::vector<float> x = RandomVectors(n, dim, 3);
  faiss::IndexHNSWFlat index(dim, 8, faiss::METRIC_INNER_PRODUCT);
  index.add(n / 2, x.data());
  const std::vector<uint8_t> before = WriteIndex(index);
  std::unique_ptr<faiss::DistanceComputer> plain(index.storage->get_distance_computer());

  UseKernelStorage(&index);
  ASSERT_NE(dynamic_cast<KernelFlatStorage*>(index.storage), nullptr);
  std::unique_ptr<faiss::DistanceComputer> kernel(index.storage->get_distance_computer());
  EXPECT_NE(typeid(*kernel), typeid(*plain));
  ASSERT_EQ(index.ntotal, n / 2);
  ASSERT_EQ(index.storage->ntotal, n / 2);
  std::vector<float> back(dim);
  for (int i = 0; i < n / 2; ++i) {
    index.reconstruct(i, back.data());
    ASSERT_EQ(0, std::memcmp(back.data(), &x[i * dim], dim * sizeof(float))) << i;
  }
  // To FAISS's writer it is still an IndexFlat: the bytes do not change.
  EXPECT_EQ(WriteIndex(index), before);

  // Inserts on the kernel, then every vector finds itself first (inner
  // product over Gaussian vectors: a vector's own score is its squared norm,
  // far above any other's at 32 dimensions).
  index.add(n - n / 2, x.data() + (n / 2) * dim);
  index.hnsw.efSearch = 64;
  std::vector<float> scores(n);
  std::vector<decltype(faiss::Index::ntotal)> labels(n);
  index.search(n, x.data(), 1, scores.data(), labels.data());
  int self = 0;
  for (int i = 0; i < n; ++i) self += labels[i] == i;
  EXPECT_GE(self, n * 98 / 100);

  // Swapping again, or a loaded index's swap, keeps working.
  UseKernelStorage(&index);
  faiss::VectorIOReader r;
  r.data = WriteIndex(index);
  std::unique_ptr<faiss::Index> loaded(faiss::read_index(&r));
  auto* hnsw = dynamic_cast<faiss::IndexHNSWFlat*>(loaded.get());
  ASSERT_NE(hnsw, nullptr);
  EXPECT_EQ(dynamic_cast<KernelFlatStorage*>(hnsw->storage), nullptr);
  UseKernelStorage(hnsw);
  ASSERT_NE(dynamic_cast<KernelFlatStorage*>(hnsw->storage), nullptr);
  EXPECT_EQ(hnsw->ntotal, n);
  hnsw->reconstruct(n - 1, back.data());
  EXPECT_EQ(0, std::memcmp(back.data(), &x[(n - 1) * dim], dim * sizeof(float)));
}

TEST(KernelFlatStorageTest, OtherMetricsKeepTheirStorage) {
  faiss::IndexHNSWFlat index(8, 4, faiss::METRIC_L1);
  faiss::Index* before = index.storage;
  UseKernelStorage(&index);
  EXPECT_EQ(index.storage, before);
  EXPECT_EQ(dynamic_cast<KernelFlatStorage*>(index.storage), nullptr);
}

}  // namespace
}  // namespace neodb::index
