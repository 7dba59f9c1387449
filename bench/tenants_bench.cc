// Tenants at scale: the two designs a multi-tenant database can take, built
// the same way in one engine and measured in the same run:
//   one-index   one multi-tenant collection (what neodb does: one model, one
//               HNSW and keyword index, each tenant's ids listed and scanned
//               alone; engine/tenant_scope.h);
//   per-tenant  one single-tenant collection per tenant (what a user without
//               tenants does: an index, a keyword index, a metadata table and
//               a catalogue entry each).
// Each run takes one design (memory is the process's, so run each in its own
// process; bench/tenants.sh runs both) and prints one JSON line: resident
// memory before and after ingest, ingest rate, and near-vector and hybrid
// near-text latency (p50/p99 over random tenants). Client vectors (no model
// in the way) with a fake query model for the hybrid queries; texts of a few
// words so the keyword indexes hold something.
//
// Then a clean shutdown (every index snapshotted) and a restart, timed: a
// collection per tenant is a set of snapshot files and a startup load each.
//
//   tenants_bench --design one-index|per-tenant [--tenants 10000]
//                 [--docs 10] [--dim 64] [--queries 2000] [--index HNSW32]
//                 [--dir PATH]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "engine/database.h"
#include "engine/fake_embedder.h"

namespace neodb::engine {
namespace {

using Clock = std::chrono::steady_clock;

double ResidentMiB() {
  std::ifstream f("/proc/self/statm");
  long pages = 0, resident = 0;
  f >> pages >> resident;
  return resident * (sysconf(_SC_PAGESIZE) / 1048576.0);
}

double CpuSeconds() {
  timespec t{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return t.tv_sec + t.tv_nsec * 1e-9;
}

struct Flags {
  std::string design = "one-index";
  int tenants = 10000;
  int docs = 10;
  int dim = 64;
  int queries = 2000;
  std::string index = "HNSW32";
  std::string dir = "/tmp/neodb_tenants_bench";
};

bool Parse(int argc, char** argv, Flags* f) {
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string k = argv[i], v = argv[i + 1];
    if (k == "--design") f->design = v;
    else if (k == "--tenants") f->tenants = std::stoi(v);
    else if (k == "--docs") f->docs = std::stoi(v);
    else if (k == "--dim") f->dim = std::stoi(v);
    else if (k == "--queries") f->queries = std::stoi(v);
    else if (k == "--dir") f->dir = v;
    else if (k == "--index") f->index = v;
    else return false;
  }
  return (f->design == "one-index" || f->design == "per-tenant") && f->tenants > 0 &&
         f->docs > 0 && f->dim > 0 && f->queries > 0;
}

double Percentile(std::vector<double> v, double p) {
  std::sort(v.begin(), v.end());
  return v[std::min(v.size() - 1, static_cast<size_t>(p * v.size()))];
}

int Run(const Flags& f) {
  std::filesystem::remove_all(f.dir);
  DatabaseOptions o;
  o.data_dir = f.dir;
  o.sync_writes = false;
  o.snapshot_interval = absl::ZeroDuration();
  o.max_collections = static_cast<size_t>(f.tenants) + 10;
  auto opened = Database::Open(o, std::make_unique<FakeEmbedder>(f.dim, 64, 1));
  if (!opened.ok()) {
    std::fprintf(stderr, "open: %s\n", opened.status().ToString().c_str());
    return 1;
  }
  std::unique_ptr<Database> db = std::move(*opened);
  const bool one = f.design == "one-index";
  const double rss_before = ResidentMiB();
  VectorOptions ext;
  ext.source = VectorSource::kExternal;
  ext.dimension = static_cast<uint32_t>(f.dim);
  ext.query_model = "default";
  auto create = [&](const std::string& name, bool multi_tenant) -> bool {
    db::CollectionSpec spec;
    spec.name = name;
    spec.index_spec = f.index;
    spec.multi_tenant = multi_tenant;
    auto c = db->CreateCollection(spec, ext);
    if (!c.ok()) {
      std::fprintf(stderr, "create %s: %s\n", name.c_str(), c.status().ToString().c_str());
    }
    return c.ok();
  };
  const char* words[] = {"invoice", "order", "refund", "shipping", "account", "login",
                         "password", "billing", "delivery", "support", "ticket", "upgrade"};
  std::mt19937_64 rng(42);
  std::normal_distribution<float> normal;
  auto vector = [&] {
    std::vector<float> v(f.dim);
    for (float& x : v) x = normal(rng);
    return v;
  };
  if (one && !create("mt", true)) return 1;
  const auto t0 = Clock::now();
  const double cpu0 = CpuSeconds();
  for (int t = 0; t < f.tenants; ++t) {
    const std::string tenant = absl::StrCat("tenant", t);
    if (!one && !create(tenant, false)) return 1;
    std::vector<DocumentInput> batch;
    for (int i = 0; i < f.docs; ++i) {
      DocumentInput in;
      in.id = one ? absl::StrCat(tenant, "/d", i) : absl::StrCat("d", i);
      in.text = absl::StrCat(words[rng() % 12], " ", words[rng() % 12], " ", words[rng() % 12],
                             " note ", i);
      in.vector = vector();
      batch.push_back(std::move(in));
    }
    auto w = db->Upsert(one ? "mt" : tenant, std::move(batch), absl::InfiniteFuture());
    if (!w.ok()) {
      std::fprintf(stderr, "upsert: %s\n", w.status().ToString().c_str());
      return 1;
    }
  }
  const double ingest_s = std::chrono::duration<double>(Clock::now() - t0).count();
  const double ingest_cpu = CpuSeconds() - cpu0;
  const double rss_after = ResidentMiB();

  std::vector<double> nv_ms, kw_ms, hy_ms;
  uint64_t hits = 0;
  // Runs one query, adds its latency to `ms`; false (said on stderr) on an error.
  auto timed = [&](const char* what, std::vector<double>* ms, auto query) {
    const auto s = Clock::now();
    absl::StatusOr<SearchResult> r = query();
    ms->push_back(std::chrono::duration<double, std::milli>(Clock::now() - s).count());
    if (!r.ok()) std::fprintf(stderr, "%s: %s\n", what, r.status().ToString().c_str());
    return r.ok();
  };
  for (int q = 0; q < f.queries; ++q) {
    const std::string tenant = absl::StrCat("tenant", rng() % f.tenants);
    const std::string collection = one ? "mt" : tenant;
    SearchParams p;
    p.k = 10;
    if (one) p.tenant = tenant;
    const std::vector<float> v = vector();
    if (!timed("near-vector", &nv_ms, [&] {
          auto r = db->NearVector(collection, v, p);
          if (r.ok()) hits += r->hits.size();
          return r;
        })) {
      return 1;
    }
    // Keyword alone (no query embedding: the index's own cost), then hybrid.
    for (SearchMode mode : {SearchMode::kKeyword, SearchMode::kHybrid}) {
      p.mode = mode;
      const std::string text = absl::StrCat(words[rng() % 12], " note");
      if (!timed(mode == SearchMode::kKeyword ? "keyword" : "hybrid",
                 mode == SearchMode::kKeyword ? &kw_ms : &hy_ms, [&] {
                   return db->NearText(collection, text, std::nullopt, p,
                                       absl::InfiniteFuture());
                 })) {
        return 1;
      }
    }
  }
  // A clean shutdown (snapshots of every index) and a restart.
  auto s = Clock::now();
  if (absl::Status st = db->Close(); !st.ok()) {
    std::fprintf(stderr, "close: %s\n", st.ToString().c_str());
    return 1;
  }
  db.reset();
  const double close_s = std::chrono::duration<double>(Clock::now() - s).count();
  s = Clock::now();
  auto again = Database::Open(o, std::make_unique<FakeEmbedder>(f.dim, 64, 1));
  if (!again.ok()) {
    std::fprintf(stderr, "reopen: %s\n", again.status().ToString().c_str());
    return 1;
  }
  const double open_s = std::chrono::duration<double>(Clock::now() - s).count();
  const double docs = static_cast<double>(f.tenants) * f.docs;
  std::printf(
      "{\"design\":\"%s\",\"index\":\"%s\",\"tenants\":%d,\"docs_per_tenant\":%d,\"dim\":%d,"
      "\"rss_before_mib\":%.1f,\"rss_after_mib\":%.1f,\"rss_per_tenant_kib\":%.2f,"
      "\"ingest_s\":%.2f,\"ingest_cpu_s\":%.2f,\"ingest_docs_per_s\":%.0f,"
      "\"near_vector_p50_ms\":%.3f,\"near_vector_p99_ms\":%.3f,"
      "\"keyword_p50_ms\":%.3f,\"keyword_p99_ms\":%.3f,"
      "\"hybrid_p50_ms\":%.3f,\"hybrid_p99_ms\":%.3f,\"mean_hits\":%.2f,"
      "\"close_s\":%.2f,\"reopen_s\":%.2f}\n",
      f.design.c_str(), f.index.c_str(), f.tenants, f.docs, f.dim, rss_before, rss_after,
      (rss_after - rss_before) * 1024.0 / f.tenants, ingest_s, ingest_cpu, docs / ingest_s,
      Percentile(nv_ms, 0.5), Percentile(nv_ms, 0.99), Percentile(kw_ms, 0.5),
      Percentile(kw_ms, 0.99), Percentile(hy_ms, 0.5),
      Percentile(hy_ms, 0.99), static_cast<double>(hits) / f.queries, close_s, open_s);
  std::fflush(stdout);
  again->reset();
  std::filesystem::remove_all(f.dir);
  return 0;
}

}  // namespace
}  // namespace neodb::engine

int main(int argc, char** argv) {
  neodb::engine::Flags f;
  if (!neodb::engine::Parse(argc, argv, &f)) {
    std::fprintf(stderr,
                 "usage: tenants_bench --design one-index|per-tenant [--tenants N] [--docs N] "
                 "[--dim N] [--queries N] [--dir PATH]\n");
    return 2;
  }
  return neodb::engine::Run(f);
}
