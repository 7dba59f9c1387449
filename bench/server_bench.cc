// server_bench: the service end to end over gRPC on 127.0.0.1 — ingest
// throughput (documents/s, tokens/s, share of wall time inside the encoder)
// and near-text (vector mode) latency p50/p99 at 1 and 8 concurrent clients.
//
//   server_bench --docs 100000 [--model DIR | --fake-dim 256] [--index Flat]
//                [--precisions f32,bf16,int8]
//
// Runs the Database and the gRPC server in process (the same code `neodb
// serve` runs) and talks to it through real loopback gRPC channels. With
// --model it uses the real encoder (e.g. a random small model from `neodb
// model init --preset small`); without, a deterministic fake embedder, which
// measures everything but the encoder. Prints a table; not a test.
//
// --precisions (with --model): one collection per precision, created with
// that precision (the server loads the checkpoint once per precision, as
// `neodb serve` does), each ingesting the same documents and answering the
// same queries, one after another in this process; so the rows are ratios
// of one run. The first precision listed is the server's default model;
// the others are copies the model registry loads. Besides wall-clock rates it prints documents per CPU-second
// of this process (CLOCK_PROCESS_CPUTIME_ID), which is what to compare on a
// shared machine.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <ctime>
#include <filesystem>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "common/openmp_wait.h"
#include "CLI/CLI.hpp"
#include "absl/strings/str_cat.h"
#include "engine/database.h"
#include "engine/fake_embedder.h"
#include "api/server.h"
#include "neodb/v1/neodb.grpc.pb.h"
#ifdef NEODB_HAVE_ENCODER
#include "engine/encoder_embedder.h"
#endif

namespace {

using Clock = std::chrono::steady_clock;

const char* kWords[] = {"the",     "of",     "and",    "to",    "in",     "is",      "was",
                        "for",     "on",     "as",     "with",  "by",     "at",      "from",
                        "his",     "her",    "city",   "river", "music",  "war",     "school",
                        "film",    "team",   "season", "album", "church", "station", "village",
                        "species", "family", "game",   "party", "league", "world"};

std::string Text(std::mt19937_64& rng, int words) {
  std::string s;
  for (int i = 0; i < words; ++i) {
    if (i) s += ' ';
    s += kWords[rng() % (sizeof(kWords) / sizeof(kWords[0]))];
  }
  return s;
}

double CpuSeconds() {
  timespec ts;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + 1e-9 * static_cast<double>(ts.tv_nsec);
}

double Pct(std::vector<double> v, double p) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v[std::min(v.size() - 1, static_cast<size_t>(p * v.size()))];
}

}  // namespace

int main(int argc, char** argv) {
  neodb::ReexecWithPassiveOpenMpWait(argv);  // as `neodb serve` does
  CLI::App app{"neodb server benchmark"};
  int docs = 100000, fake_dim = 256, words = 48, batch = 64, queries = 400, ingest_clients = 4;
  std::string model_dir, index = "Flat", data_dir, precision_list = "f32";
  app.add_option("--docs", docs)->capture_default_str();
  app.add_option("--model", model_dir, "Model directory (default: fake embedder)");
  app.add_option("--fake-dim", fake_dim)->capture_default_str();
  app.add_option("--words", words, "Words per document")->capture_default_str();
  app.add_option("--batch", batch, "Documents per stream message")->capture_default_str();
  app.add_option("--ingest-clients", ingest_clients)->capture_default_str();
  app.add_option("--queries", queries, "Queries per client")->capture_default_str();
  app.add_option("--index", index)->capture_default_str();
  app.add_option("--data-dir", data_dir, "Scratch directory (default: a temp dir)");
  app.add_option("--precisions", precision_list,
                 "Comma-separated encoder precisions (f32, bf16, int8), one collection each "
                 "(the fake embedder ignores them)")
      ->capture_default_str();
  CLI11_PARSE(app, argc, argv);
  std::vector<std::string> precisions;
  for (size_t start = 0; start <= precision_list.size();) {
    size_t end = precision_list.find(',', start);
    if (end == std::string::npos) end = precision_list.size();
    const std::string name = precision_list.substr(start, end - start);
    if (auto p = neodb::encoder::ParsePrecision(name); !p.ok()) {
      std::fprintf(stderr, "%s\n", p.status().ToString().c_str());
      return 2;
    }
    precisions.push_back(name);
    start = end + 1;
  }
  if (precisions.empty()) precisions.push_back("f32");

  std::unique_ptr<neodb::engine::Embedder> embedder;
  neodb::engine::DatabaseOptions o;
  if (!model_dir.empty()) {
#ifdef NEODB_HAVE_ENCODER
    // Every model (the default, and a copy per other precision) the way
    // `neodb serve` opens them.
    auto open = [](const std::string& dir, neodb::encoder::Precision precision) {
      neodb::encoder::EncoderOptions eo;
      eo.backend.num_threads = static_cast<int>(std::thread::hardware_concurrency());
      eo.backend.precision = precision;
      return neodb::engine::EncoderEmbedder::Open(dir, eo);
    };
    model_dir = std::filesystem::absolute(model_dir).string();
    // The server's default model: the first precision listed.
    auto e = open(model_dir, *neodb::encoder::ParsePrecision(precisions.front()));
    if (!e.ok()) {
      std::fprintf(stderr, "%s\n", e.status().ToString().c_str());
      return 1;
    }
    embedder = std::move(*e);
    o.embedder_factory = open;
    o.default_model_dir = model_dir;
    o.default_precision = *neodb::encoder::ParsePrecision(precisions.front());
#else
    std::fprintf(stderr, "built without the encoder\n");
    return 1;
#endif
  } else {
    embedder = std::make_unique<neodb::engine::FakeEmbedder>(fake_dim, 4096);
  }
  if (data_dir.empty()) {
    data_dir =
        (std::filesystem::temp_directory_path() / absl::StrCat("neodb_bench_", getpid())).string();
  }
  std::filesystem::remove_all(data_dir);
  o.data_dir = data_dir;
  o.snapshot_interval = absl::ZeroDuration();
  auto db = neodb::engine::Database::Open(o, std::move(embedder));
  if (!db.ok()) {
    std::fprintf(stderr, "%s\n", db.status().ToString().c_str());
    return 1;
  }
  neodb::api::ServerOptions so;
  so.threads = 32;
  auto server = neodb::api::Server::Start(db->get(), so);
  if (!server.ok()) return 1;
  const std::string addr = absl::StrCat("127.0.0.1:", (*server)->port());
  auto channel = [&] {
    grpc::ChannelArguments a;
    a.SetInt("grpc.use_local_subchannel_pool", 1);  // one connection per client
    return grpc::CreateCustomChannel(addr, grpc::InsecureChannelCredentials(), a);
  };
  struct Row {
    std::string precision;  // what the collection's vectors are computed in
    uint64_t docs = 0, tokens = 0;
    double ingest_s = 0, ingest_cpu_s = 0, encoder_s = 0;
    double p50[2] = {0, 0}, p99[2] = {0, 0}, qps[2] = {0, 0};
  };
  std::vector<Row> rows;
  for (const std::string& precision : precisions) {
    const std::string collection = absl::StrCat("bench_", precision);
    Row row;
    {
      auto cols = neodb::v1::Collections::NewStub(channel());
      grpc::ClientContext ctx;
      neodb::v1::CreateCollectionRequest req;
      req.mutable_spec()->set_name(collection);
      req.mutable_spec()->mutable_index()->set_type(index);
      if (!model_dir.empty()) req.mutable_spec()->set_precision(precision);
      neodb::v1::CreateCollectionResponse resp;
      grpc::Status s = cols->Create(&ctx, req, &resp);
      if (!s.ok()) {
        std::fprintf(stderr, "create: %s\n", s.error_message().c_str());
        return 1;
      }
      row.precision = model_dir.empty() ? "(fake)" : resp.info().spec().precision();
    }
    // A copy of the checkpoint in another precision loads on create: that is
    // not ingest time.
    const double enc0 = (*db)->Stats().embed.encoder_seconds;

    // --- Ingest: `ingest_clients` concurrent streams (the same documents for
    // every precision: each client's generator restarts).
    std::atomic<uint64_t> tokens{0}, ingested{0};
    const auto t0 = Clock::now();
    const double c0 = CpuSeconds();
    std::vector<std::thread> ts;
    for (int c = 0; c < ingest_clients; ++c) {
      ts.emplace_back([&, c] {
        std::mt19937_64 rng(c + 1);
        auto stub = neodb::v1::Documents::NewStub(channel());
        grpc::ClientContext ctx;
        neodb::v1::BulkIngestResponse resp;
        auto w = stub->BulkIngest(&ctx, &resp);
        neodb::v1::IngestBatch b;
        b.set_collection(collection);
        for (int i = c; i < docs; i += ingest_clients) {
          auto* d = b.add_documents();
          d->set_id(absl::StrCat("d", i));
          d->set_text(Text(rng, words));
          (*d->mutable_metadata())["bucket"].set_int_value(i % 100);
          if (b.documents_size() == batch) {
            w->Write(b);
            b.clear_documents();
          }
        }
        if (b.documents_size()) w->Write(b);
        w->WritesDone();
        grpc::Status s = w->Finish();
        if (!s.ok()) std::fprintf(stderr, "ingest: %s\n", s.error_message().c_str());
        tokens += resp.tokens();
        ingested += resp.documents();
      });
    }
    for (auto& t : ts) t.join();
    row.ingest_s = std::chrono::duration<double>(Clock::now() - t0).count();
    row.ingest_cpu_s = CpuSeconds() - c0;
    row.encoder_s = (*db)->Stats().embed.encoder_seconds - enc0;
    row.docs = ingested;
    row.tokens = tokens;

    // --- Near-text latency at 1 and 8 clients (the same queries every time).
    for (int k = 0; k < 2; ++k) {
      const int clients = k == 0 ? 1 : 8;
      std::vector<std::vector<double>> lat(clients);
      const auto q0 = Clock::now();
      std::vector<std::thread> qs;
      for (int c = 0; c < clients; ++c) {
        qs.emplace_back([&, c] {
          std::mt19937_64 rng(1000 + c);
          auto stub = neodb::v1::Search::NewStub(channel());
          for (int i = 0; i < queries; ++i) {
            grpc::ClientContext ctx;
            ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(30));
            neodb::v1::NearTextRequest req;
            req.set_collection(collection);
            req.set_query(Text(rng, 8));
            req.set_k(10);
            req.set_mode("vector");  // the embedding path (hybrid is the default)
            neodb::v1::SearchResponse resp;
            const auto s0 = Clock::now();
            grpc::Status s = stub->NearText(&ctx, req, &resp);
            lat[c].push_back(std::chrono::duration<double, std::milli>(Clock::now() - s0).count());
            if (!s.ok()) std::fprintf(stderr, "search: %s\n", s.error_message().c_str());
          }
        });
      }
      for (auto& t : qs) t.join();
      const double secs = std::chrono::duration<double>(Clock::now() - q0).count();
      std::vector<double> all;
      for (auto& l : lat) all.insert(all.end(), l.begin(), l.end());
      row.p50[k] = Pct(all, 0.5);
      row.p99[k] = Pct(all, 0.99);
      row.qps[k] = all.size() / secs;
    }
    rows.push_back(row);
  }

  auto st = (*db)->Stats();
  std::printf("# server_bench: %d docs x %d words, index %s, model %s (dim %d), %u hw threads, "
              "%llu models loaded\n",
              docs, words, index.c_str(), st.model_id.c_str(), st.dimension,
              std::thread::hardware_concurrency(),
              static_cast<unsigned long long>(st.models_loaded));
  std::printf(
      "(encoder share: the server's Stats count the default model's batcher only, so the\n"
      "rows after the first show it for the default model, %s, alone)\n",
      precisions.front().c_str());
  std::printf(
      "| precision | documents | ingest docs/s | docs/cpu-s | tokens/s | encoder share | "
      "near-text 1 client p50 / p99 ms | q/s | 8 clients p50 / p99 ms | q/s |\n"
      "|---|---:|---:|---:|---:|---:|---|---:|---|---:|\n");
  for (const auto& r : rows) {
    std::printf("| %s | %llu | %.1f | %.1f | %.0f | %.1f%% | %.2f / %.2f | %.0f | %.2f / %.2f | "
                "%.0f |\n",
                r.precision.c_str(), static_cast<unsigned long long>(r.docs), r.docs / r.ingest_s,
                r.docs / r.ingest_cpu_s, r.tokens / r.ingest_s, 100.0 * r.encoder_s / r.ingest_s,
                r.p50[0], r.p99[0], r.qps[0], r.p50[1], r.p99[1], r.qps[1]);
  }
  (*server)->Shutdown(absl::Seconds(5));
  server->reset();
  (void)(*db)->Close();
  db->reset();
  std::filesystem::remove_all(data_dir);
  return 0;
}
