// restore_bench: how long a restored data directory takes to serve an HNSW
// collection, from a backup that carries its index snapshots (engine/backup.h)
// and from the same backup without them (what every backup was before: the
// first start rebuilds the graph from the store).
//
//   restore_bench [--vectors 200000] [--dim 256] [--index HNSW32]
//                 [--dir /tmp/neodb_restore_bench] [--reuse]
//
// The collection holds client vectors (near-vector inserts, no model):
// random vectors around 1,000 Gaussian centres (noise 0.3 per coordinate;
// the index normalises them), in batches of 1,000 through
// Database::Upsert, the code `neodb serve` runs. One backup is made; its
// copy without snapshots/ (manifest resealed, snapshot_seq 0) is the
// "without" case. Each case is timed as RestoreBackup (verify every
// checksum, copy, sync, rename) and then Database::Open until it serves,
// with the database's own counters saying whether the index was loaded or
// rebuilt; then (untimed) Verify checks every id and vector of the index.
// --reuse keeps --dir and, when it holds a backup of --vectors vectors,
// skips ingest and backup.
// Prints a table; not a test.
#include <chrono>
#include <cstdio>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <thread>

#include "CLI/CLI.hpp"
#include "absl/strings/str_cat.h"
#include "engine/backup.h"
#include "engine/database.h"
#include "engine/fake_embedder.h"

namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;
using neodb::engine::Database;
using neodb::engine::DatabaseOptions;

double Seconds(Clock::time_point a, Clock::time_point b) {
  return std::chrono::duration<double>(b - a).count();
}

std::string CpuModel() {
  std::ifstream f("/proc/cpuinfo");
  std::string line;
  while (std::getline(f, line)) {
    if (line.rfind("model name", 0) == 0) return line.substr(line.find(':') + 2);
  }
  return "unknown";
}

uint64_t TreeBytes(const fs::path& p, const std::string& under = "") {
  uint64_t n = 0;
  const fs::path root = under.empty() ? p : p / under;
  if (!fs::exists(root)) return 0;
  for (const auto& e : fs::recursive_directory_iterator(root)) {
    if (e.is_regular_file()) n += e.file_size();
  }
  return n;
}

void Die(const absl::Status& s, const char* what) {
  if (s.ok()) return;
  std::fprintf(stderr, "restore_bench: %s: %s\n", what, s.ToString().c_str());
  std::exit(1);
}

// The collection holds client vectors; a database still wants a default model.
std::unique_ptr<neodb::engine::Embedder> Model(int dim) {
  return std::make_unique<neodb::engine::FakeEmbedder>(dim, 512);
}

DatabaseOptions Options(const fs::path& dir) {
  DatabaseOptions o;
  o.data_dir = dir.string();
  o.sync_writes = false;
  o.snapshot_interval = absl::ZeroDuration();
  o.snapshot_on_close = false;  // each case is timed from the backup alone
  return o;
}

std::vector<float> Vector(std::mt19937_64& rng, const std::vector<float>& centres, int dim) {
  std::normal_distribution<float> g(0, 1);
  const size_t c = std::uniform_int_distribution<size_t>(0, centres.size() / dim - 1)(rng);
  std::vector<float> v(dim);
  for (int i = 0; i < dim; ++i) v[i] = centres[c * dim + i] + 0.3f * g(rng);
  return v;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"restore time of an HNSW collection with and without index snapshots"};
  int vectors = 200000, dim = 256;
  std::string dir = "/tmp/neodb_restore_bench", index = "HNSW32";
  bool reuse = false;
  app.add_option("--vectors", vectors)->capture_default_str();
  app.add_option("--dim", dim)->capture_default_str();
  app.add_option("--index", index)->capture_default_str();
  app.add_option("--dir", dir)->capture_default_str();
  app.add_flag("--reuse", reuse, "Keep --dir; skip ingest and backup when they are there");
  CLI11_PARSE(app, argc, argv);

  const fs::path root(dir);
  const fs::path live = root / "live", backup = root / "backup";
  const fs::path bare = root / "backup-no-snapshots";
  const std::string stamp = root / "ingested";
  std::ifstream had(stamp);
  int had_n = 0;
  if (!(reuse && (had >> had_n) && had_n == vectors)) {
    fs::remove_all(root);
    fs::create_directories(root);
    auto db = Database::Open(Options(live), Model(dim));
    Die(db.status(), "open");
    neodb::db::CollectionSpec spec;
    spec.name = "bench";
    spec.index_spec = index;
    neodb::engine::VectorOptions vo;
    vo.source = neodb::engine::VectorSource::kExternal;
    vo.dimension = static_cast<uint32_t>(dim);
    vo.name = "bench";
    Die((*db)->CreateCollection(spec, vo).status(), "create");
    std::mt19937_64 rng(7);
    std::vector<float> centres(1000 * static_cast<size_t>(dim));
    std::normal_distribution<float> g(0, 1);
    for (float& x : centres) x = g(rng);
    const auto t0 = Clock::now();
    for (int done = 0; done < vectors;) {
      std::vector<neodb::engine::DocumentInput> docs;
      for (int i = 0; i < 1000 && done < vectors; ++i, ++done) {
        neodb::engine::DocumentInput d;
        d.id = absl::StrCat("v", done);
        d.vector = Vector(rng, centres, dim);
        docs.push_back(std::move(d));
      }
      Die((*db)->Upsert("bench", std::move(docs), absl::InfiniteFuture()).status(), "upsert");
      if (done % 20000 == 0) {
        std::fprintf(stderr, "ingested %d (%.0f s)\n", done, Seconds(t0, Clock::now()));
      }
    }
    const double ingest_s = Seconds(t0, Clock::now());
    const auto b0 = Clock::now();
    Die((*db)->Backup(backup.string()).status(), "backup");
    const double backup_s = Seconds(b0, Clock::now());
    db->reset();
    // The same backup without its snapshots: what a backup held before.
    fs::copy(backup, bare, fs::copy_options::recursive);
    fs::remove_all(bare / "snapshots");
    fs::remove(bare / "manifest.json");
    std::ifstream in(backup / "manifest.json");
    std::stringstream ss;
    ss << in.rdbuf();
    auto m = neodb::engine::ManifestFromJson(ss.str());
    Die(m.status(), "manifest");
    auto files = neodb::engine::DescribeFiles(bare.string());
    Die(files.status(), "describe");
    m->files = *files;
    m->snapshot_seq = 0;
    std::ofstream(bare / "manifest.json") << neodb::engine::ManifestToJson(*m);
    std::ofstream(stamp) << vectors;
    std::printf("ingest %d x %d into %s: %.1f s; online backup: %.1f s\n", vectors, dim,
                index.c_str(), ingest_s, backup_s);
  }

  std::printf("\nhost: %s, %u hardware threads\n", CpuModel().c_str(),
              std::thread::hardware_concurrency());
  std::printf("%d vectors x %d, %s, cosine\n\n", vectors, dim, index.c_str());
  std::printf("%-22s %10s %10s %10s %10s %8s %8s %10s\n", "backup", "MiB", "restore s", "open s",
              "total s", "loaded", "rebuilt", "recall@10");
  for (const auto& [name, from] : {std::pair{"with snapshots", backup},
                                   std::pair{"without snapshots", bare}}) {
    const fs::path target = root / "restored";
    fs::remove_all(target);
    const auto t0 = Clock::now();
    Die(neodb::engine::RestoreBackup(from.string(), target.string()), "restore");
    const auto t1 = Clock::now();
    auto db = Database::Open(Options(target), Model(dim));
    Die(db.status(), "open restored");
    const auto t2 = Clock::now();
    const auto stats = (*db)->Stats();
    // Served, and right: Verify compares every id and every stored vector
    // with the index (engine/vector_verify.h), and a stored vector finds
    // itself among its 10 nearest (HNSW is approximate).
    auto v = (*db)->Verify("bench");
    Die(v.status(), "verify");
    if (v->indexed != static_cast<uint64_t>(vectors) || v->missing_from_index != 0 ||
        v->stale_in_index != 0 || v->vectors.index_mismatches != 0) {
      std::fprintf(stderr, "restore_bench: the restored index disagrees with its store\n");
      return 1;
    }
    // Self-recall@10 over 200 stored vectors: the graph serves as well loaded
    // as rebuilt (HNSW is approximate, so neither need be 1).
    std::vector<std::string> probe;
    for (int i = 0; i < 200; ++i) probe.push_back(absl::StrCat("v", i * (vectors / 200)));
    auto got = (*db)->Get("bench", probe);
    Die(got.status(), "get");
    int found = 0;
    for (size_t i = 0; i < probe.size(); ++i) {
      neodb::engine::SearchParams p;
      p.k = 10;
      auto r = (*db)->NearVector("bench", (*got)[i]->vector, p);
      Die(r.status(), "search");
      for (const auto& h : r->hits) found += h.id == probe[i];
    }
    std::printf("%-22s %10.1f %10.1f %10.1f %10.1f %8llu %8llu %10.3f\n", name,
                TreeBytes(from) / 1048576.0, Seconds(t0, t1), Seconds(t1, t2), Seconds(t0, t2),
                static_cast<unsigned long long>(stats.snapshot_loads),
                static_cast<unsigned long long>(stats.index_rebuilds), found / 200.0);
    db->reset();
  }
  std::printf("\n(snapshots part of the backup: %.1f MiB)\n",
              TreeBytes(backup, "snapshots") / 1048576.0);
  if (!reuse) fs::remove_all(root / "restored");
  return 0;
}
