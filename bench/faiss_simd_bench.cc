// faiss_simd_bench: what the linked FAISS's SIMD kernels change for neodb's
// index work (issue 51; bench/README.md "FAISS with the host's SIMD").
//
//   faiss_simd_bench [--only=hnsw|ivfpq|flat] [--n=20000] [--dim=384] [--queries=500]
//
// Built twice, against Debian's FAISS 1.7.3 and against tools/build_faiss.sh's
// (cmake/NeodbDeps.cmake, NEODB_FAISS_PREFIX), and run A/B on the same host.
// Everything runs on one thread (OpenMP and index builds), so process CPU time
// measures the work even while other jobs load the host. Data: unit vectors
// drawn around 1,000 Gaussian centres (index_bench's stand-in for sentence
// embeddings); queries are fresh draws. Each phase prints its wall and CPU
// seconds and, for searches, recall@10 against exact search.
//   hnsw:  HnswIndex M=32 (efConstruction 40) Add of all n; single-query
//          searches through the graph at efSearch 64.
//   ivfpq: IvfPqIndex IVF256,PQ16 (8-bit): the Add that trains (at
//          39 * 256 vectors), the Add of the rest, single-query searches at
//          the default nprobe (16).
//   flat:  faiss::IndexFlatIP single-query searches, and one batch of 256.
// This is a benchmark, not a test.

#include <faiss/Index.h>
#include <faiss/IndexFlat.h>
#include <omp.h>
#include <time.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <random>
#include <string>
#include <unordered_set>
#include <vector>

#include "bench/index_bench_data.h"
#include "index/exact_search.h"
#include "index/flat_index.h"
#include "index/hnsw_index.h"
#include "index/ivfpq_index.h"
#include "index/threads.h"

namespace {

using neodb::bench::Clustered;
using neodb::bench::Ids;
using neodb::bench::Recall;
using neodb::index::FlatIndex;
using neodb::index::HnswIndex;
using neodb::index::IvfPqIndex;
using neodb::index::Metric;
using neodb::index::SearchHit;

struct Args {
  std::string only;  // "" = all
  size_t n = 20000;
  int dim = 384;
  size_t queries = 500;
};

Args Parse(int argc, char** argv) {
  Args a;
  for (int i = 1; i < argc; ++i) {
    const std::string s = argv[i];
    auto val = [&](const char* p) -> const char* {
      const size_t l = std::strlen(p);
      return s.compare(0, l, p) == 0 ? s.c_str() + l : nullptr;
    };
    if (auto v = val("--only=")) {
      a.only = v;
    } else if (auto v = val("--n=")) {
      a.n = std::stoul(v);
    } else if (auto v = val("--dim=")) {
      a.dim = std::stoi(v);
    } else if (auto v = val("--queries=")) {
      a.queries = std::stoul(v);
    } else {
      std::fprintf(stderr, "unknown argument %s\n", argv[i]);
      std::exit(2);
    }
  }
  return a;
}

double Now(clockid_t clock) {
  timespec t;
  clock_gettime(clock, &t);
  return t.tv_sec + t.tv_nsec * 1e-9;
}

// Wall and process-CPU seconds of one phase, printed when it ends.
class Phase {
 public:
  explicit Phase(std::string name)
      : name_(std::move(name)), wall_(Now(CLOCK_MONOTONIC)), cpu_(Now(CLOCK_PROCESS_CPUTIME_ID)) {}
  void End(double recall = -1) {
    std::printf("phase %-14s wall_s %8.3f cpu_s %8.3f", name_.c_str(),
                Now(CLOCK_MONOTONIC) - wall_, Now(CLOCK_PROCESS_CPUTIME_ID) - cpu_);
    if (recall >= 0) std::printf(" recall@10 %.4f", recall);
    std::printf("\n");
    std::fflush(stdout);
  }

 private:
  std::string name_;
  double wall_, cpu_;
};

// Single-query searches of `index`; the ids of each query's hits.
template <typename Index>
std::vector<std::vector<int64_t>> SearchEach(const Index& index, const std::vector<float>& queries,
                                             size_t nq, int dim, int k,
                                             const neodb::index::SearchOptions& options = {}) {
  std::vector<std::vector<int64_t>> got(nq);
  for (size_t q = 0; q < nq; ++q) {
    auto res = index.Search(std::span<const float>(&queries[q * dim], dim), k, nullptr, options);
    if (!res.ok()) {
      std::fprintf(stderr, "search: %s\n", res.status().ToString().c_str());
      std::exit(1);
    }
    got[q] = Ids((*res)[0]);
  }
  return got;
}

void Check(const absl::Status& s, const char* what) {
  if (!s.ok()) {
    std::fprintf(stderr, "%s: %s\n", what, s.ToString().c_str());
    std::exit(1);
  }
}

}  // namespace

int main(int argc, char** argv) {
  const Args a = Parse(argc, argv);
  const int dim = a.dim;
  const int k = 10;
  omp_set_num_threads(1);
  neodb::index::SetIndexBuildThreads(1);
  std::printf("faiss %d.%d.%d, n %zu, dim %d, queries %zu, 1 thread\n", FAISS_VERSION_MAJOR,
              FAISS_VERSION_MINOR, FAISS_VERSION_PATCH, a.n, dim, a.queries);

  std::mt19937 rng(1);
  std::normal_distribution<float> g(0, 1);
  std::vector<float> centers(1000 * dim);
  for (float& c : centers) c = g(rng);
  const std::vector<float> base = Clustered(a.n, dim, centers, 2);
  const std::vector<float> queries = Clustered(std::max<size_t>(a.queries, 256), dim, centers, 3);
  std::vector<int64_t> ids(a.n);
  for (size_t i = 0; i < a.n; ++i) ids[i] = static_cast<int64_t>(i);

  // Ground truth: neodb's exact index (its own kernels, not FAISS's).
  FlatIndex exact(dim, Metric::kInnerProduct);
  Check(exact.Add(ids, base), "exact add");
  const auto truth = SearchEach(exact, queries, a.queries, dim, k);

  if (a.only.empty() || a.only == "hnsw") {
    HnswIndex hnsw(dim, 32, Metric::kInnerProduct);
    hnsw.set_exact_below(0);  // always walk the graph
    Phase build("hnsw-build");
    Check(hnsw.Add(ids, base), "hnsw add");
    build.End();
    neodb::index::SearchOptions options;
    options.ef_search = 64;
    Phase search("hnsw-search");
    const auto got = SearchEach(hnsw, queries, a.queries, dim, k, options);
    search.End(Recall(got, truth));
  }

  if (a.only.empty() || a.only == "ivfpq") {
    IvfPqIndex ivf(dim, 256, 16, Metric::kInnerProduct);
    const size_t first = std::min(a.n, ivf.TrainThreshold());
    Phase train("ivfpq-train");
    Check(ivf.Add(std::span<const int64_t>(ids.data(), first),
                  std::span<const float>(base.data(), first * dim)),
          "ivfpq train add");
    train.End();
    if (!ivf.trained()) {
      std::fprintf(stderr, "ivfpq: --n below the training threshold %zu\n", ivf.TrainThreshold());
      return 1;
    }
    Phase add("ivfpq-add");
    Check(ivf.Add(std::span<const int64_t>(ids.data() + first, a.n - first),
                  std::span<const float>(base.data() + first * dim, (a.n - first) * dim)),
          "ivfpq add");
    add.End();
    Phase search("ivfpq-search");
    const auto got = SearchEach(ivf, queries, a.queries, dim, k);
    search.End(Recall(got, truth));
  }

  if (a.only.empty() || a.only == "flat") {
    faiss::IndexFlatIP flat(dim);
    flat.add(static_cast<decltype(flat.ntotal)>(a.n), base.data());
    std::vector<float> dist(256 * k);
    std::vector<decltype(flat.ntotal)> lab(256 * k);
    std::vector<std::vector<int64_t>> got(a.queries);
    Phase search("flat-search");
    for (size_t q = 0; q < a.queries; ++q) {
      flat.search(1, &queries[q * dim], k, dist.data(), lab.data());
      got[q].assign(lab.begin(), lab.begin() + k);
    }
    search.End(Recall(got, truth));
    Phase batch("flat-batch256");  // FAISS uses BLAS sgemm from 20 queries on
    flat.search(256, queries.data(), k, dist.data(), lab.data());
    batch.End();
  }
  return 0;
}
