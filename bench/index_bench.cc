// index_bench: exact and approximate vector search on this machine.
//
//   index_bench [--n=100000] [--dim=256] [--queries=200] [--batch=256] [--skip-hnsw]
//
// Data: a mixture of 1,000 Gaussian clusters (unit-normalised), a stand-in for
// sentence embeddings, which cluster by topic; queries are fresh draws from the
// same mixture. Prints one table (latency p50/p99 per single query, batched
// throughput, recall@10 against exact search) and the machine it ran on.
// This is a benchmark, not a test: numbers go to bench/README.md ## Index.

#include <cblas.h>
#include <faiss/IndexFlat.h>
#include <omp.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <random>
#include <string>
#include <thread>
#include <unordered_set>
#include <vector>

#include "bench/index_bench_data.h"
#include "index/exact_search.h"
#include "index/flat_index.h"
#include "index/hnsw_index.h"
#include "index/index_factory.h"
#include "index/threads.h"

namespace {

using neodb::bench::Clustered;
using neodb::bench::Ids;
using neodb::bench::Recall;
using neodb::index::FlatIndex;
using neodb::index::HnswIndex;
using neodb::index::Metric;
using neodb::index::SearchHit;
using Clock = std::chrono::steady_clock;

struct Args {
  size_t n = 100000;
  int dim = 256;
  size_t queries = 200;
  size_t batch = 256;
  bool hnsw = true;
  std::string hnsw_cache;  // load/save the built HNSW here (iterating on search policy)
};

Args Parse(int argc, char** argv) {
  Args a;
  for (int i = 1; i < argc; ++i) {
    std::string s = argv[i];
    auto val = [&](const char* p) -> const char* {
      size_t l = std::strlen(p);
      return s.compare(0, l, p) == 0 ? s.c_str() + l : nullptr;
    };
    if (auto v = val("--n="))
      a.n = std::stoul(v);
    else if (auto v = val("--dim="))
      a.dim = std::stoi(v);
    else if (auto v = val("--queries="))
      a.queries = std::stoul(v);
    else if (auto v = val("--batch="))
      a.batch = std::stoul(v);
    else if (s == "--skip-hnsw")
      a.hnsw = false;
    else if (auto v = val("--hnsw-cache="))
      a.hnsw_cache = v;
    else {
      std::fprintf(stderr, "unknown argument %s\n", argv[i]);
      std::exit(2);
    }
  }
  return a;
}

// The linked FAISS: Debian's 1.7.3 or tools/build_faiss.sh's (issue 51).
std::string FaissVersion() {
  return std::to_string(FAISS_VERSION_MAJOR) + "." + std::to_string(FAISS_VERSION_MINOR) + "." +
         std::to_string(FAISS_VERSION_PATCH);
}

double Ms(Clock::duration d) { return std::chrono::duration<double, std::milli>(d).count(); }

struct Row {
  std::string method, mode;
  double p50 = -1, p99 = -1, qps = -1, recall = -1;
};

std::vector<Row> g_rows;

// Times fn(q) per query; returns p50/p99 in ms and single-stream QPS.
template <typename Fn>
Row TimeSingle(const std::string& method, const std::string& mode, size_t nq, Fn fn) {
  fn(0);  // warm-up
  std::vector<double> t;
  auto start = Clock::now();
  for (size_t q = 0; q < nq; ++q) {
    auto s = Clock::now();
    fn(q);
    t.push_back(Ms(Clock::now() - s));
  }
  double total = Ms(Clock::now() - start);
  std::sort(t.begin(), t.end());
  Row r{method, mode};
  r.p50 = t[t.size() / 2];
  r.p99 = t[std::min(t.size() - 1, t.size() * 99 / 100)];
  r.qps = nq / (total / 1000);
  return r;
}

void Print(const Args& a, double hnsw_build_s) {
  char host[256] = {};
  gethostname(host, sizeof(host) - 1);
  std::string cpu = "?";
  std::ifstream info("/proc/cpuinfo");
  for (std::string line; std::getline(info, line);) {
    if (line.rfind("model name", 0) == 0) {
      cpu = line.substr(line.find(':') + 2);
      break;
    }
  }
  double load[3] = {};
  getloadavg(load, 3);
  std::printf("\nmachine: %s, %u hardware threads, load average %.1f (shared host)\n", cpu.c_str(),
              std::thread::hardware_concurrency(), load[0]);
  std::printf("data: %zu x %d clustered unit vectors, %zu queries, k=10, batch=%zu\n", a.n, a.dim,
              a.queries, a.batch);
  if (hnsw_build_s >= 0) std::printf("HNSW32 build (efConstruction 40): %.1f s\n", hnsw_build_s);
  std::printf("\n| %-34s | %-28s | %9s | %9s | %9s | %9s |\n", "method", "mode", "p50 ms", "p99 ms",
              "QPS", "recall@10");
  std::printf("|%s|%s|%s|%s|%s|%s|\n", std::string(36, '-').c_str(), std::string(30, '-').c_str(),
              std::string(11, '-').c_str(), std::string(11, '-').c_str(),
              std::string(11, '-').c_str(), std::string(11, '-').c_str());
  for (const Row& r : g_rows) {
    auto f = [](double v, const char* fmt) {
      char b[32];
      if (v < 0) return std::string("-");
      std::snprintf(b, sizeof b, fmt, v);
      return std::string(b);
    };
    std::printf("| %-34s | %-28s | %9s | %9s | %9s | %9s |\n", r.method.c_str(), r.mode.c_str(),
                f(r.p50, "%.3f").c_str(), f(r.p99, "%.3f").c_str(), f(r.qps, "%.0f").c_str(),
                f(r.recall, "%.4f").c_str());
  }
}

}  // namespace

int main(int argc, char** argv) {
  Args a = Parse(argc, argv);
  const int dim = a.dim;
  neodb::index::SetIndexBuildThreads(0);
  std::mt19937 rng(1);
  std::normal_distribution<float> g(0, 1);
  std::vector<float> centers(1000 * dim);
  for (float& c : centers) c = g(rng);
  std::fprintf(stderr, "generating data...\n");
  std::vector<float> base = Clustered(a.n, dim, centers, 2);
  std::vector<float> queries = Clustered(std::max(a.queries, a.batch), dim, centers, 3);
  std::vector<int64_t> ids(a.n);
  for (size_t i = 0; i < a.n; ++i) ids[i] = static_cast<int64_t>(i);
  const int k = 10;

  // Ground truth and our exact index.
  FlatIndex flat(dim, Metric::kInnerProduct);
  if (!flat.Add(ids, base).ok()) return 1;
  std::vector<std::vector<int64_t>> truth(a.queries);
  {
    auto res = flat.Search(std::span<const float>(queries.data(), a.queries * dim), k);
    for (size_t q = 0; q < a.queries; ++q) truth[q] = Ids((*res)[q]);
  }

  // 1. FAISS IndexFlatIP, one query at a time, single OpenMP thread (serving).
  faiss::IndexFlatIP faiss_flat(dim);
  faiss_flat.add(a.n, base.data());
  {
    std::vector<std::vector<int64_t>> got(a.queries);
    std::vector<float> dist(k);
    std::vector<decltype(faiss_flat.ntotal)> lab(k);
    omp_set_num_threads(1);
    Row r = TimeSingle("faiss IndexFlatIP (" + FaissVersion() + ")", "1 query, 1 thread", a.queries,
                       [&](size_t q) {
                         faiss_flat.search(1, &queries[q * dim], k, dist.data(), lab.data());
                         got[q].assign(lab.begin(), lab.end());
                       });
    r.recall = Recall(got, truth);
    g_rows.push_back(r);
    omp_set_num_threads(std::thread::hardware_concurrency());
    // Batched: FAISS switches to BLAS sgemm at >= 20 queries.
    auto s = Clock::now();
    std::vector<float> bd(a.batch * k);
    std::vector<decltype(faiss_flat.ntotal)> bl(a.batch * k);
    faiss_flat.search(a.batch, queries.data(), k, bd.data(), bl.data());
    Row b{"faiss IndexFlatIP (" + FaissVersion() + ")", "batch of " + std::to_string(a.batch)};
    b.qps = a.batch / (Ms(Clock::now() - s) / 1000);
    g_rows.push_back(b);
  }

  // 2. cblas_sgemv + top-k (what an OpenBLAS single query costs).
  {
    std::vector<float> scores(a.n);
    std::vector<std::vector<int64_t>> got(a.queries);
    Row r = TimeSingle(
        "OpenBLAS cblas_sgemv + top-k", "1 query, BLAS threads", a.queries, [&](size_t q) {
          cblas_sgemv(CblasRowMajor, CblasNoTrans, a.n, dim, 1.0f, base.data(), dim,
                      &queries[q * dim], 1, 0.0f, scores.data(), 1);
          std::vector<int64_t> idx(a.n);
          for (size_t i = 0; i < a.n; ++i) idx[i] = i;
          std::partial_sort(idx.begin(), idx.begin() + k, idx.end(),
                            [&](int64_t x, int64_t y) { return scores[x] > scores[y]; });
          got[q].assign(idx.begin(), idx.begin() + k);
        });
    r.recall = Recall(got, truth);
    g_rows.push_back(r);
  }

  // 3. neodb Flat: DotRows (AVX2/AVX-512 clones) per query; sgemm for batches.
  {
    std::vector<std::vector<int64_t>> got(a.queries);
    Row r = TimeSingle("neodb Flat (DotRows, heap top-k)", "1 query, 1 thread", a.queries,
                       [&](size_t q) {
                         auto res = flat.Search(std::span<const float>(&queries[q * dim], dim), k);
                         got[q] = Ids((*res)[0]);
                       });
    r.recall = Recall(got, truth);
    g_rows.push_back(r);
    auto s = Clock::now();
    auto res = flat.Search(std::span<const float>(queries.data(), a.batch * dim), k);
    Row b{"neodb Flat (sgemm blocks)", "batch of " + std::to_string(a.batch)};
    b.qps = a.batch / (Ms(Clock::now() - s) / 1000);
    g_rows.push_back(b);
    // Exact single-query latency at smaller sizes (the HNSW exact threshold).
    for (size_t n : {size_t{10000}, size_t{20000}, size_t{50000}}) {
      if (n >= a.n) continue;
      FlatIndex small(dim, Metric::kInnerProduct);
      (void)small.Add(std::span<const int64_t>(ids.data(), n),
                      std::span<const float>(base.data(), n * dim));
      g_rows.push_back(TimeSingle("neodb Flat @" + std::to_string(n / 1000) + "k",
                                  "1 query, 1 thread", a.queries, [&](size_t q) {
                                    (void)small.Search(
                                        std::span<const float>(&queries[q * dim], dim), k);
                                  }));
    }
  }

  // 4. HNSW32 through neodb's HnswIndex (graph forced: exact_below = 0).
  double build_s = -1;
  if (a.hnsw) {
    std::unique_ptr<HnswIndex> owned;
    if (!a.hnsw_cache.empty()) {
      if (auto loaded = neodb::index::LoadIndex(a.hnsw_cache); loaded.ok()) {
        owned.reset(dynamic_cast<HnswIndex*>(loaded->release()));
        if (owned && owned->size() != a.n) owned.reset();
      }
    }
    if (!owned) {
      owned = std::make_unique<HnswIndex>(dim, 32, Metric::kInnerProduct);
      std::fprintf(stderr, "building HNSW32 over %zu vectors...\n", a.n);
      auto s = Clock::now();
      for (size_t start = 0; start < a.n; start += 10000) {
        size_t m = std::min<size_t>(10000, a.n - start);
        if (!owned
                 ->Add(std::span<const int64_t>(&ids[start], m),
                       std::span<const float>(&base[start * dim], m * dim))
                 .ok()) {
          return 1;
        }
      }
      build_s = Ms(Clock::now() - s) / 1000;
      if (!a.hnsw_cache.empty()) (void)owned->Save(a.hnsw_cache);
    }
    HnswIndex& hnsw = *owned;
    const size_t default_exact_below = neodb::index::kHnswExactMaxFloats / dim;
    hnsw.set_exact_below(0);
    for (int ef : {32, 64, 128, 256}) {
      std::vector<std::vector<int64_t>> got(a.queries);
      neodb::index::SearchOptions o;
      o.ef_search = ef;
      Row r = TimeSingle("faiss HNSW32 (" + FaissVersion() + ")",
                         "1 query, efSearch " + std::to_string(ef), a.queries, [&](size_t q) {
                           auto res = hnsw.Search(std::span<const float>(&queries[q * dim], dim), k,
                                                  nullptr, o);
                           got[q] = Ids((*res)[0]);
                         });
      r.recall = Recall(got, truth);
      g_rows.push_back(r);
    }
    // Filtered: 10% of ids allowed, applied inside the graph walk.
    struct Tenth : neodb::index::IdFilter {
      bool Allowed(int64_t id) const override { return id % 10 == 3; }
    } tenth;
    std::vector<std::vector<int64_t>> ftruth(a.queries), fgot(a.queries), fexact(a.queries);
    {
      auto res = flat.Search(std::span<const float>(queries.data(), a.queries * dim), k, &tenth);
      for (size_t q = 0; q < a.queries; ++q) ftruth[q] = Ids((*res)[q]);
    }
    for (int ef : {64, 128}) {
      neodb::index::SearchOptions o;
      o.ef_search = ef;
      Row r = TimeSingle(
          "faiss HNSW32 + IDSelector", "10% allowed, efSearch " + std::to_string(ef) + "/f",
          a.queries, [&](size_t q) {
            auto res = hnsw.Search(std::span<const float>(&queries[q * dim], dim), k, &tenth, o);
            fgot[q] = Ids((*res)[0]);
          });
      r.recall = Recall(fgot, ftruth);
      g_rows.push_back(r);
    }
    // The shipped policy (exact below kHnswExactMaxFloats, exact over small
    // allowed sets), as the service runs it.
    hnsw.set_exact_below(default_exact_below);
    {
      Row r = TimeSingle("neodb HNSW32 policy", "unfiltered", a.queries, [&](size_t q) {
        auto res = hnsw.Search(std::span<const float>(&queries[q * dim], dim), k);
        fgot[q] = Ids((*res)[0]);
      });
      r.recall = Recall(fgot, truth);
      g_rows.push_back(r);
      r = TimeSingle("neodb HNSW32 policy", "10% allowed", a.queries, [&](size_t q) {
        auto res = hnsw.Search(std::span<const float>(&queries[q * dim], dim), k, &tenth);
        fgot[q] = Ids((*res)[0]);
      });
      r.recall = Recall(fgot, ftruth);
      g_rows.push_back(r);
    }
    Row e = TimeSingle("neodb Flat + IdFilter", "1 query, 10% allowed", a.queries, [&](size_t q) {
      auto res = flat.Search(std::span<const float>(&queries[q * dim], dim), k, &tenth);
      fexact[q] = Ids((*res)[0]);
    });
    e.recall = Recall(fexact, ftruth);
    g_rows.push_back(e);
  }
  Print(a, build_s);
  return 0;
}
