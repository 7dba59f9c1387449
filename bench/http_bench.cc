// http_bench: the same searches through gRPC and through the HTTP JSON API
// (POST /v1/rpc/Search/NearText), one run, one host, so that a user knows
// what the JSON convenience costs: latency p50/p99 and requests/s per search
// mode (keyword: no embedding, so the transport is most of it; vector and
// hybrid: with the embed queue) at 1 and N concurrent clients.
//
//   http_bench [--docs 5000] [--queries 500] [--clients 1,8] [--fake-dim 256]
//
// Runs the Database, the gRPC server and the HTTP server in process (the code
// `neodb serve --http` runs) over a deterministic fake embedder, ingests the
// documents through gRPC, then for each mode and client count runs the same
// query list through each transport: every gRPC client on a channel of its
// own, every HTTP client on a keep-alive connection of its own
// (cpp-httplib's client), each parsing the answer it gets (protobuf or
// JSON), as a client would. Before timing, both transports answer the first
// query with the same hit ids, or the run stops. Prints a table; not a test.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "CLI/CLI.hpp"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "api/http/http_server.h"
#include "api/http/json_rpc.h"
#include "api/server.h"
#include "common/openmp_wait.h"
#include "engine/database.h"
#include "engine/fake_embedder.h"
#include "httplib.h"
#include "neodb/v1/neodb.grpc.pb.h"
#include "nlohmann/json.hpp"

namespace {

using Clock = std::chrono::steady_clock;

const char* kWords[] = {"the",   "of",     "and",    "city",   "river",  "music",  "war",
                        "school", "film",  "team",   "season", "album",  "church", "station",
                        "village", "species", "family", "game", "party", "league", "world"};

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

struct Result {
  double p50_ms = 0, p99_ms = 0, qps = 0;
  int errors = 0;
};

// `clients` threads, each running every query of `queries` through `one`
// (a client made per thread by `make`); latencies of all calls.
template <class MakeClient, class Call>
Result Run(int clients, const std::vector<std::string>& queries, MakeClient make, Call one) {
  std::vector<std::vector<double>> lat(clients);
  std::vector<int> errors(clients, 0);
  std::vector<std::thread> ts;
  const auto t0 = Clock::now();
  for (int c = 0; c < clients; ++c) {
    ts.emplace_back([&, c] {
      auto client = make();
      for (const std::string& q : queries) {
        const auto s = Clock::now();
        if (!one(*client, q)) ++errors[c];
        lat[c].push_back(std::chrono::duration<double, std::milli>(Clock::now() - s).count());
      }
    });
  }
  for (auto& t : ts) t.join();
  const double wall = std::chrono::duration<double>(Clock::now() - t0).count();
  std::vector<double> all;
  Result r;
  for (int c = 0; c < clients; ++c) {
    all.insert(all.end(), lat[c].begin(), lat[c].end());
    r.errors += errors[c];
  }
  r.p50_ms = Pct(all, 0.5);
  r.p99_ms = Pct(all, 0.99);
  r.qps = static_cast<double>(all.size()) / wall;
  return r;
}

}  // namespace

int main(int argc, char** argv) {
  neodb::ReexecWithPassiveOpenMpWait(argv);  // as `neodb serve` does
  CLI::App app{"neodb: the same searches over gRPC and over the HTTP JSON API"};
  int docs = 5000, queries = 500, fake_dim = 256, words = 32, k = 10;
  std::string client_list = "1,8", data_dir;
  app.add_option("--docs", docs)->capture_default_str();
  app.add_option("--queries", queries, "Queries per client, per mode and transport")
      ->capture_default_str();
  app.add_option("--clients", client_list, "Concurrent clients, comma-separated")
      ->capture_default_str();
  app.add_option("--fake-dim", fake_dim)->capture_default_str();
  app.add_option("--words", words, "Words per document")->capture_default_str();
  app.add_option("--k", k)->capture_default_str();
  app.add_option("--data-dir", data_dir, "Scratch directory (default: a temp dir)");
  CLI11_PARSE(app, argc, argv);
  std::vector<int> client_counts;
  for (absl::string_view c : absl::StrSplit(client_list, ',')) {
    int n = 0;
    if (!absl::SimpleAtoi(c, &n) || n < 1) {
      std::fprintf(stderr, "--clients: bad count '%s'\n", std::string(c).c_str());
      return 2;
    }
    client_counts.push_back(n);
  }
  if (data_dir.empty()) {
    data_dir = (std::filesystem::temp_directory_path() / absl::StrCat("neodb_http_bench_", getpid()))
                   .string();
  }
  std::filesystem::remove_all(data_dir);
  neodb::engine::DatabaseOptions o;
  o.data_dir = data_dir;
  o.snapshot_interval = absl::ZeroDuration();
  auto db = neodb::engine::Database::Open(
      o, std::make_unique<neodb::engine::FakeEmbedder>(fake_dim, 4096));
  if (!db.ok()) {
    std::fprintf(stderr, "%s\n", db.status().ToString().c_str());
    return 1;
  }
  neodb::api::ServerOptions so;
  so.threads = 32;
  auto server = neodb::api::Server::Start(db->get(), so);
  if (!server.ok()) {
    std::fprintf(stderr, "%s\n", server.status().ToString().c_str());
    return 1;
  }
  neodb::api::JsonRpc rpc((*server)->services(), nullptr);
  const int max_clients = *std::max_element(client_counts.begin(), client_counts.end());
  // A keep-alive connection holds a pool thread: one per client and spare.
  auto http = neodb::api::HttpServer::Start(
      {.listen = "127.0.0.1:0", .threads = max_clients + 4, .rpc = &rpc});
  if (!http.ok()) {
    std::fprintf(stderr, "%s\n", http.status().ToString().c_str());
    return 1;
  }
  const std::string addr = absl::StrCat("127.0.0.1:", (*server)->port());
  const int http_port = (*http)->port();
  auto channel = [&] {
    grpc::ChannelArguments a;
    a.SetInt("grpc.use_local_subchannel_pool", 1);  // one connection per client
    return grpc::CreateCustomChannel(addr, grpc::InsecureChannelCredentials(), a);
  };

  // --- The collection, through gRPC.
  {
    auto cols = neodb::v1::Collections::NewStub(channel());
    grpc::ClientContext ctx;
    neodb::v1::CreateCollectionRequest req;
    req.mutable_spec()->set_name("bench");
    neodb::v1::CreateCollectionResponse resp;
    if (grpc::Status s = cols->Create(&ctx, req, &resp); !s.ok()) {
      std::fprintf(stderr, "create: %s\n", s.error_message().c_str());
      return 1;
    }
    auto stub = neodb::v1::Documents::NewStub(channel());
    std::mt19937_64 rng(1);
    for (int i = 0; i < docs; i += 256) {
      grpc::ClientContext uctx;
      neodb::v1::UpsertRequest u;
      u.set_collection("bench");
      for (int j = i; j < std::min(docs, i + 256); ++j) {
        auto* d = u.add_documents();
        d->set_id(absl::StrCat("d", j));
        d->set_text(Text(rng, words));
      }
      neodb::v1::UpsertResponse ur;
      if (grpc::Status s = stub->Upsert(&uctx, u, &ur); !s.ok()) {
        std::fprintf(stderr, "upsert: %s\n", s.error_message().c_str());
        return 1;
      }
    }
  }
  std::vector<std::string> query_list;
  {
    std::mt19937_64 rng(7);
    for (int i = 0; i < queries; ++i) query_list.push_back(Text(rng, 3));
  }

  using Stub = neodb::v1::Search::Stub;
  auto grpc_call = [k](const std::string& mode) {
    return [k, mode](Stub& stub, const std::string& q) {
      grpc::ClientContext ctx;
      neodb::v1::NearTextRequest req;
      req.set_collection("bench");
      req.set_query(q);
      req.set_k(k);
      req.set_mode(mode);
      neodb::v1::SearchResponse resp;
      // A query of stop words alone may have no keyword hits: an answer,
      // not an error.
      return stub.NearText(&ctx, req, &resp).ok();
    };
  };
  auto http_body = [k](const std::string& mode, const std::string& q) {
    return nlohmann::json{{"collection", "bench"}, {"query", q}, {"k", k}, {"mode", mode}}.dump();
  };
  auto http_call = [&](const std::string& mode) {
    return [&, mode](httplib::Client& c, const std::string& q) {
      auto r = c.Post("/v1/rpc/Search/NearText", http_body(mode, q), "application/json");
      if (!r || r->status != 200) return false;
      const nlohmann::json j = nlohmann::json::parse(r->body, nullptr, false);
      return j.is_object() && j.contains("hits") && j["hits"].is_array();
    };
  };
  auto new_stub = [&] { return neodb::v1::Search::NewStub(channel()); };
  auto new_http = [&] {
    auto c = std::make_unique<httplib::Client>("127.0.0.1", http_port);
    c->set_keep_alive(true);
    c->set_tcp_nodelay(true);
    return c;
  };

  std::printf("http_bench: %d documents, %d queries per client, k=%d, fake embedder dim %d, "
              "%u hardware threads\n",
              docs, queries, k, fake_dim, std::thread::hardware_concurrency());
  std::printf("%-8s %7s %-5s %9s %9s %10s %8s\n", "mode", "clients", "via", "p50 ms", "p99 ms",
              "req/s", "errors");
  for (const std::string mode : {"keyword", "vector", "hybrid"}) {
    // The same answer through both, before any timing.
    {
      auto stub = new_stub();
      grpc::ClientContext ctx;
      neodb::v1::NearTextRequest req;
      req.set_collection("bench");
      req.set_query(query_list[0]);
      req.set_k(k);
      req.set_mode(mode);
      neodb::v1::SearchResponse resp;
      grpc::Status s = stub->NearText(&ctx, req, &resp);
      auto c = new_http();
      auto r = c->Post("/v1/rpc/Search/NearText", http_body(mode, query_list[0]),
                       "application/json");
      if (!s.ok() || !r || r->status != 200) {
        std::fprintf(stderr, "%s: a transport failed the first query\n", mode.c_str());
        return 1;
      }
      const nlohmann::json j = nlohmann::json::parse(r->body);
      std::vector<std::string> a, b;
      for (const auto& h : resp.hits()) a.push_back(h.id());
      for (const auto& h : j["hits"]) b.push_back(h["id"]);
      if (a != b || a.empty()) {
        std::fprintf(stderr, "%s: gRPC and HTTP answered differently\n", mode.c_str());
        return 1;
      }
    }
    for (int clients : client_counts) {
      // Alternating which goes first would not remove the order's effect on
      // a busy machine; one warm-up pass of each does the caches' share.
      const std::vector<std::string> warm(query_list.begin(),
                                          query_list.begin() + std::min<size_t>(20, queries));
      Run(clients, warm, new_stub, grpc_call(mode));
      Run(clients, warm, new_http, http_call(mode));
      const Result g = Run(clients, query_list, new_stub, grpc_call(mode));
      const Result h = Run(clients, query_list, new_http, http_call(mode));
      std::printf("%-8s %7d %-5s %9.3f %9.3f %10.0f %8d\n", mode.c_str(), clients, "gRPC",
                  g.p50_ms, g.p99_ms, g.qps, g.errors);
      std::printf("%-8s %7d %-5s %9.3f %9.3f %10.0f %8d\n", mode.c_str(), clients, "HTTP",
                  h.p50_ms, h.p99_ms, h.qps, h.errors);
      std::fflush(stdout);
    }
  }
  http->reset();
  (*server)->Shutdown(absl::Seconds(5));
  server->reset();
  db->reset();
  std::filesystem::remove_all(data_dir);
  return 0;
}
