// server_bench: the service end to end over gRPC on 127.0.0.1 — ingest
// throughput (documents/s, tokens/s, share of wall time inside the encoder)
// and near-text latency p50/p99 at 1 and 8 concurrent clients.
//
//   server_bench --docs 100000 [--model DIR | --fake-dim 256] [--index Flat]
//
// Runs the Database and the gRPC server in process (the same code `neodb
// serve` runs) and talks to it through real loopback gRPC channels. With
// --model it uses the real encoder (e.g. a random small model from `neodb
// model init --preset small`); without, a deterministic fake embedder, which
// measures everything but the encoder. Prints a table; not a test.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <random>
#include <thread>
#include <vector>

#include "CLI/CLI.hpp"
#include "absl/strings/str_cat.h"
#include "api/engine/database.h"
#include "api/engine/fake_embedder.h"
#include "api/server.h"
#include "neodb/v1/neodb.grpc.pb.h"
#ifdef NEODB_HAVE_ENCODER
#include "api/engine/encoder_embedder.h"
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

double Pct(std::vector<double> v, double p) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v[std::min(v.size() - 1, static_cast<size_t>(p * v.size()))];
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"neodb server benchmark"};
  int docs = 100000, fake_dim = 256, words = 48, batch = 64, queries = 400, ingest_clients = 4;
  std::string model_dir, index = "Flat", data_dir;
  app.add_option("--docs", docs)->capture_default_str();
  app.add_option("--model", model_dir, "Model directory (default: fake embedder)");
  app.add_option("--fake-dim", fake_dim)->capture_default_str();
  app.add_option("--words", words, "Words per document")->capture_default_str();
  app.add_option("--batch", batch, "Documents per stream message")->capture_default_str();
  app.add_option("--ingest-clients", ingest_clients)->capture_default_str();
  app.add_option("--queries", queries, "Queries per client")->capture_default_str();
  app.add_option("--index", index)->capture_default_str();
  app.add_option("--data-dir", data_dir, "Scratch directory (default: a temp dir)");
  CLI11_PARSE(app, argc, argv);

  std::unique_ptr<neodb::engine::Embedder> embedder;
  if (!model_dir.empty()) {
#ifdef NEODB_HAVE_ENCODER
    neodb::encoder::EncoderOptions eo;
    eo.backend.num_threads = static_cast<int>(std::thread::hardware_concurrency());
    auto e = neodb::engine::EncoderEmbedder::Open(model_dir, eo);
    if (!e.ok()) {
      std::fprintf(stderr, "%s\n", e.status().ToString().c_str());
      return 1;
    }
    embedder = std::move(*e);
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
  neodb::engine::DatabaseOptions o;
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
  {
    auto cols = neodb::v1::Collections::NewStub(channel());
    grpc::ClientContext ctx;
    neodb::v1::CreateCollectionRequest req;
    req.mutable_spec()->set_name("bench");
    req.mutable_spec()->mutable_index()->set_type(index);
    neodb::v1::CreateCollectionResponse resp;
    grpc::Status s = cols->Create(&ctx, req, &resp);
    if (!s.ok()) {
      std::fprintf(stderr, "create: %s\n", s.error_message().c_str());
      return 1;
    }
  }

  // --- Ingest: `ingest_clients` concurrent streams.
  std::atomic<uint64_t> tokens{0}, ingested{0};
  const auto t0 = Clock::now();
  std::vector<std::thread> ts;
  for (int c = 0; c < ingest_clients; ++c) {
    ts.emplace_back([&, c] {
      std::mt19937_64 rng(c + 1);
      auto stub = neodb::v1::Documents::NewStub(channel());
      grpc::ClientContext ctx;
      neodb::v1::BulkIngestResponse resp;
      auto w = stub->BulkIngest(&ctx, &resp);
      neodb::v1::IngestBatch b;
      b.set_collection("bench");
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
  const double ingest_s = std::chrono::duration<double>(Clock::now() - t0).count();
  const double enc_s = (*db)->Stats().embed.encoder_seconds;

  // --- Near-text latency at 1 and 8 clients.
  struct Row {
    int clients;
    double p50, p99, qps;
  };
  std::vector<Row> rows;
  for (int clients : {1, 8}) {
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
          req.set_collection("bench");
          req.set_query(Text(rng, 8));
          req.set_k(10);
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
    rows.push_back({clients, Pct(all, 0.5), Pct(all, 0.99), all.size() / secs});
  }

  auto st = (*db)->Stats();
  std::printf("# server_bench: %d docs x %d words, index %s, model %s (dim %d), %u hw threads\n",
              docs, words, index.c_str(), st.model_id.c_str(), st.dimension,
              std::thread::hardware_concurrency());
  std::printf("| phase | metric | value |\n|---|---|---|\n");
  std::printf("| ingest | documents | %llu |\n", static_cast<unsigned long long>(ingested.load()));
  std::printf("| ingest | docs/s | %.0f |\n", ingested / ingest_s);
  std::printf("| ingest | tokens/s | %.0f |\n", tokens / ingest_s);
  std::printf("| ingest | encoder share of wall time | %.1f%% |\n", 100.0 * enc_s / ingest_s);
  for (const auto& r : rows) {
    std::printf("| near-text, %d client%s | p50 / p99 ms | %.2f / %.2f |\n", r.clients,
                r.clients > 1 ? "s" : "", r.p50, r.p99);
    std::printf("| near-text, %d client%s | queries/s | %.0f |\n", r.clients,
                r.clients > 1 ? "s" : "", r.qps);
  }
  (*server)->Shutdown(absl::Seconds(5));
  server->reset();
  (void)(*db)->Close();
  db->reset();
  std::filesystem::remove_all(data_dir);
  return 0;
}
