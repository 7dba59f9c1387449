// hybrid_bench: keyword and hybrid search through the engine (Database, the
// code `neodb serve` runs, without gRPC) at N documents with the fake
// embedder, on one thread: query latency p50/p99 per mode, and the keyword
// index's share of ingest time.
//
//   hybrid_bench [--docs 100000] [--index Flat|HNSW32|...] [--corpus corpus.jsonl
//                --queries queries.jsonl] [--reuse] [--hits-out hits.tsv]
//                [--mode keyword|vector|hybrid] [--filter none|30%]
//
// Documents: with --corpus, its texts (title + text) cycled to --docs, each
// copy with a marker word so none is identical; without, 150 words drawn from
// a Zipf (s = 1) vocabulary of 50,000 words. Queries: --queries' texts, or 8
// Zipf words. The fake embedder costs next to nothing, so the hybrid figure
// is the engine's own cost on top of the encoder's query time.
//
// Ingest share: the engine ingests every document (Upsert in batches of 256:
// store, fake embedding, vector index, metadata, keyword index), then the same
// documents are indexed into a standalone keyword::KeywordIndex and timed
// alone; the share is that time over the engine's ingest time. (With the real
// encoder, ingest time is far longer, so the share is smaller still.)
//
// --reuse keeps --dir after the run and, when it already holds the collection
// with --docs documents, skips ingest (and the ingest figures): an HNSW ingest
// of 100k documents costs minutes of CPU, a reopen seconds. The documents are
// still generated so that the queries are the same.
// --hits-out writes every query's hit ids (one line per mode, filter and
// query: mode, filter, query number, ids in rank order), so that an
// approximate index's hits can be compared with Flat's on the same queries
// (recall@10; bench/README.md ## Hybrid search).
// Prints a table; not a test.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <random>
#include <thread>
#include <vector>

#include "CLI/CLI.hpp"
#include "absl/strings/str_cat.h"
#include "engine/database.h"
#include "engine/fake_embedder.h"
#include "index/keyword/keyword_index.h"
#include "nlohmann/json.hpp"

namespace {

using Clock = std::chrono::steady_clock;
using neodb::engine::SearchMode;

double Pct(std::vector<double> v, double p) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v[std::min(v.size() - 1, static_cast<size_t>(p * v.size()))];
}

// CPU seconds of the whole process (every thread): robust to a shared,
// loaded machine where wall time is not.
double CpuSeconds() {
  timespec t;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return t.tv_sec + t.tv_nsec * 1e-9;
}

double Ms(Clock::time_point a, Clock::time_point b) {
  return std::chrono::duration<double, std::milli>(b - a).count();
}

class Zipf {
 public:
  Zipf(int n, double s) {
    double sum = 0;
    for (int i = 1; i <= n; ++i) cdf_.push_back(sum += 1.0 / std::pow(i, s));
    for (double& c : cdf_) c /= sum;
  }
  int operator()(std::mt19937_64& rng) {
    double u = std::uniform_real_distribution<double>(0, 1)(rng);
    return static_cast<int>(std::lower_bound(cdf_.begin(), cdf_.end(), u) - cdf_.begin());
  }

 private:
  std::vector<double> cdf_;
};

std::string ZipfText(Zipf& z, std::mt19937_64& rng, int words) {
  std::string s;
  for (int i = 0; i < words; ++i) absl::StrAppend(&s, i ? " " : "", "w", z(rng));
  return s;
}

std::vector<std::string> ReadTexts(const std::string& path, bool title) {
  std::vector<std::string> out;
  std::ifstream f(path);
  std::string line;
  while (std::getline(f, line)) {
    if (line.empty()) continue;
    auto j = nlohmann::json::parse(line);
    std::string t = j.value("text", "");
    if (title && !j.value("title", "").empty()) t = j.value("title", "") + " " + t;
    out.push_back(t);
  }
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"keyword and hybrid search through the engine"};
  int docs = 100000, queries = 1000, dim = 256;
  std::string corpus, query_file, dir = "/tmp/neodb_hybrid_bench", index = "Flat";
  app.add_option("--docs", docs)->capture_default_str();
  app.add_option("--queries-n", queries, "Queries timed per mode")->capture_default_str();
  app.add_option("--dim", dim)->capture_default_str();
  app.add_option("--corpus", corpus, "BEIR corpus.jsonl (title + text)");
  app.add_option("--queries", query_file, "BEIR queries.jsonl");
  app.add_option("--dir", dir)->capture_default_str();
  app.add_option("--index", index, "The vector index (a FAISS factory string)")
      ->capture_default_str();
  std::string hits_out, only_mode, only_filter;
  app.add_option("--mode", only_mode, "Time only this mode (keyword|vector|hybrid); default all");
  app.add_option("--filter", only_filter, "Time only this filter (none|30%); default both");
  app.add_option("--hits-out", hits_out, "Write each query's hit ids here (TSV)");
  bool reuse = false;
  app.add_flag("--reuse", reuse, "Keep --dir; skip ingest when it holds the documents already");
  CLI11_PARSE(app, argc, argv);

  std::mt19937_64 rng(1);
  Zipf zipf(50000, 1.0);
  std::vector<std::string> base =
      corpus.empty() ? std::vector<std::string>{} : ReadTexts(corpus, true);
  std::vector<std::string> texts;
  texts.reserve(docs);
  for (int i = 0; i < docs; ++i) {
    texts.push_back(base.empty() ? ZipfText(zipf, rng, 150)
                                 : absl::StrCat(base[i % base.size()], " copy", i / base.size()));
  }
  std::vector<std::string> qs =
      query_file.empty() ? std::vector<std::string>{} : ReadTexts(query_file, false);
  if (qs.empty()) {
    for (int i = 0; i < queries; ++i) qs.push_back(ZipfText(zipf, rng, 8));
  }

  if (!reuse) std::filesystem::remove_all(dir);
  neodb::engine::DatabaseOptions o;
  o.data_dir = dir;
  o.sync_writes = false;
  o.snapshot_interval = absl::ZeroDuration();
  auto db = neodb::engine::Database::Open(
      o, std::make_unique<neodb::engine::FakeEmbedder>(dim, 1 << 20, 1));
  if (!db.ok()) {
    std::fprintf(stderr, "%s\n", db.status().ToString().c_str());
    return 1;
  }
  auto info = (*db)->DescribeCollection("bench");
  const bool ingest = !info.ok();
  if (!ingest && (info->count != static_cast<uint64_t>(docs) || info->index_spec != index)) {
    std::fprintf(stderr, "%s holds another collection (%llu documents, %s): remove it\n",
                 dir.c_str(), static_cast<unsigned long long>(info->count),
                 info->index_spec.c_str());
    return 1;
  }
  double ingest_ms = 0, ingest_cpu = 0, keyword_ms = 0, keyword_cpu = 0;
  if (ingest) {
    neodb::db::CollectionSpec spec;
    spec.name = "bench";
    spec.overflow = "chunk";
    spec.index_spec = index;
    if (auto s = (*db)->CreateCollection(spec); !s.ok()) {
      std::fprintf(stderr, "%s\n", s.status().ToString().c_str());
      return 1;
    }
    const auto t0 = Clock::now();
    const double c0 = CpuSeconds();
    for (int i = 0; i < docs; i += 256) {
      std::vector<neodb::engine::DocumentInput> batch;
      for (int j = i; j < std::min(docs, i + 256); ++j) {
        batch.push_back({absl::StrCat("d", j), texts[j], {{"bucket", int64_t{j % 10}}}});
      }
      auto r = (*db)->Upsert("bench", std::move(batch), absl::InfiniteFuture());
      if (!r.ok()) {
        std::fprintf(stderr, "%s\n", r.status().ToString().c_str());
        return 1;
      }
    }
    ingest_ms = Ms(t0, Clock::now());
    ingest_cpu = CpuSeconds() - c0;
    // The keyword index alone over the same documents.
    auto kw = neodb::keyword::KeywordIndex::Create({});
    const auto t1 = Clock::now();
    const double c1 = CpuSeconds();
    for (int i = 0; i < docs; ++i) (void)(*kw)->Upsert(static_cast<uint64_t>(i + 1), texts[i]);
    keyword_ms = Ms(t1, Clock::now());
    keyword_cpu = CpuSeconds() - c1;
    info = (*db)->DescribeCollection("bench");
  }

  std::printf(
      "documents %d (%s), queries %zu (%s), fake embedder dim %d, vector index %s, one "
      "thread\n",
      docs, corpus.empty() ? "Zipf 150 words" : corpus.c_str(), qs.size(),
      query_file.empty() ? "Zipf 8 words" : query_file.c_str(), dim, index.c_str());
  std::printf("keyword index: %llu terms, %llu postings, %.1f MiB\n",
              static_cast<unsigned long long>(info->keyword.terms),
              static_cast<unsigned long long>(info->keyword.postings),
              info->keyword.memory_bytes / 1048576.0);
  if (ingest) {
    std::printf(
        "ingest through the engine: %.1f s (%.0f docs/s); keyword index alone %.1f s = "
        "%.1f%% of it\n",
        ingest_ms / 1000, docs / (ingest_ms / 1000), keyword_ms / 1000,
        100 * keyword_ms / ingest_ms);
    std::printf("CPU: engine ingest %.1f s, keyword index alone %.1f s = %.1f%% (%.3f ms/doc)\n",
                ingest_cpu, keyword_cpu, 100 * keyword_cpu / ingest_cpu, 1000 * keyword_cpu / docs);
  } else {
    std::printf("reused %s: no ingest\n", dir.c_str());
  }
  // CPU ms per query beside the wall-clock percentiles: on a shared machine
  // the wall clock carries other jobs' load, the process CPU time does not.
  std::printf(
      "| mode | filter | k | p50 ms | p99 ms | CPU ms/query |\n|---|---|---:|---:|---:|---:|\n");
  std::ofstream hits_file;
  if (!hits_out.empty()) hits_file.open(hits_out);
  auto filter = neodb::db::ParseFilterJson(R"({"field":"bucket","lt":3})");
  for (SearchMode mode : {SearchMode::kKeyword, SearchMode::kVector, SearchMode::kHybrid}) {
    for (bool filtered : {false, true}) {
      if (!only_mode.empty() && only_mode != neodb::engine::SearchModeName(mode)) continue;
      if (!only_filter.empty() && only_filter != (filtered ? "30%" : "none")) continue;
      neodb::engine::SearchParams p;
      p.k = 10;
      p.mode = mode;
      if (filtered) p.filter = *filter;
      std::vector<double> lat;
      std::vector<std::vector<std::string>> hit_ids;  // for --hits-out, written untimed
      const int n = std::min<int>(queries, static_cast<int>(qs.size()));
      const double cpu0 = CpuSeconds();
      for (int i = 0; i < n; ++i) {
        const auto a = Clock::now();
        auto r = (*db)->NearText("bench", qs[i], std::nullopt, p, absl::InfiniteFuture());
        lat.push_back(Ms(a, Clock::now()));
        if (!r.ok()) {
          std::fprintf(stderr, "%s\n", r.status().ToString().c_str());
          return 1;
        }
        if (hits_file.is_open()) {
          std::vector<std::string>& ids = hit_ids.emplace_back();
          for (auto& h : r->hits) ids.push_back(std::move(h.id));
        }
      }
      const double cpu_ms = 1000 * (CpuSeconds() - cpu0) / std::max(1, n);
      for (size_t i = 0; i < hit_ids.size(); ++i) {
        hits_file << neodb::engine::SearchModeName(mode) << '\t' << (filtered ? "30%" : "none")
                  << '\t' << i;
        for (const std::string& id : hit_ids[i]) hits_file << '\t' << id;
        hits_file << '\n';
      }
      std::printf("| %s | %s | 10 | %.2f | %.2f | %.2f |\n",
                  std::string(neodb::engine::SearchModeName(mode)).c_str(),
                  filtered ? "30%" : "none", Pct(lat, 0.5), Pct(lat, 0.99), cpu_ms);
    }
  }
  (*db)->Close().IgnoreError();
  if (!reuse) std::filesystem::remove_all(dir);
  return 0;
}
