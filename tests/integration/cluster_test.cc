// `neodb serve --nats` end to end: two server processes joined through a real
// nats-server (all three started here on ports the OS picks) serve a sharded
// collection over gRPC. A collection created on one node appears on the
// other; writes taken by either (unary or streamed) are read on the other
// with the consistency token; a node killed with
// SIGKILL and restarted on its data directory resumes from its stored
// positions and reads writes made while it was down; a server alone refuses
// shards.
#include <algorithm>
#include <cmath>
#include <iostream>
#include <memory>
#include <set>
#include <thread>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "httplib.h"
#include "gtest/gtest.h"
#include "neodb/v1/neodb.grpc.pb.h"
#include "tests/cluster/nats_server_process.h"
#include "tests/integration/server_process.h"
#include "tests/integration/test_env.h"
#include "tests/integration/tls_test_util.h"

namespace neodb::testing {
namespace {

namespace v1 = ::neodb::v1;

std::vector<std::string> NodeArgs(const TestDir& dir, const std::string& id,
                                  const std::string& nats) {
  return {"--data-dir", dir.Sub(id), "--fake-model", "32", "--nats", nats, "--node-id", id};
}

grpc::Status Upsert(ServerProcess& s, int from, int to, const std::string& word,
                    v1::UpsertResponse* resp) {
  auto docs = v1::Documents::NewStub(s.Channel());
  v1::UpsertRequest req;
  req.set_collection("papers");
  for (int i = from; i < to; ++i) {
    auto* d = req.add_documents();
    d->set_id(absl::StrCat("doc", i));
    d->set_text(absl::StrCat(word, " number ", i));
  }
  grpc::ClientContext ctx;
  ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(60));
  return docs->Upsert(&ctx, req, resp);
}

// Creates `name` through `channel`: sharded `shards` ways with `replicas`
// copies of each shard (0 and 0: an ordinary collection).
grpc::Status Create(const std::shared_ptr<grpc::Channel>& channel, const std::string& name,
                    int shards, int replicas) {
  v1::CreateCollectionRequest req;
  req.mutable_spec()->set_name(name);
  req.set_shards(shards);
  req.set_replicas(replicas);
  v1::CreateCollectionResponse resp;
  grpc::ClientContext ctx;
  ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(60));
  return v1::Collections::NewStub(channel)->Create(&ctx, req, &resp);
}

grpc::Status Search(ServerProcess& s, const std::string& collection, const std::string& query,
                    const std::string& token, v1::SearchResponse* resp) {
  auto search = v1::Search::NewStub(s.Channel());
  v1::NearTextRequest req;
  req.set_collection(collection);
  req.set_query(query);
  req.set_k(100);
  req.set_mode("keyword");
  req.set_consistency_token(token);
  grpc::ClientContext ctx;
  ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(60));
  return search->NearText(&ctx, req, resp);
}

// Nodes a, b and c on the nats-server at `url`, started.
void StartThree(const TestDir& dir, const std::string& url,
                std::vector<std::unique_ptr<ServerProcess>>* nodes) {
  for (const char* id : {"a", "b", "c"}) {
    nodes->push_back(std::make_unique<ServerProcess>(NodeArgs(dir, id, url)));
    ASSERT_TRUE(nodes->back()->Start());
  }
}

std::set<std::string> HitIds(const v1::SearchResponse& r) {
  std::set<std::string> ids;
  for (const auto& h : r.hits()) ids.insert(h.id());
  return ids;
}

// The ids of a vector-mode search of "papers" for `query` on `s`, best first.
void VectorTop(ServerProcess& s, const std::string& query, int k, std::vector<std::string>* ids) {
  auto search = v1::Search::NewStub(s.Channel());
  v1::NearTextRequest req;
  req.set_collection("papers");
  req.set_query(query);
  req.set_k(k);
  req.set_mode("vector");
  grpc::ClientContext ctx;
  v1::SearchResponse r;
  grpc::Status st = search->NearText(&ctx, req, &r);
  ASSERT_TRUE(st.ok()) << st.error_message();
  for (const auto& h : r.hits()) ids->push_back(h.id());
}

TEST(ClusterServeTest, TwoNodesServeAShardedCollection) {
  TestDir dir("cluster");
  auto nats = cluster::testing::NatsServerProcess::Start(dir.Sub("nats"));
  ASSERT_TRUE(nats.ok()) << nats.status();
  const std::string url = (*nats)->url();
  ServerProcess a(NodeArgs(dir, "a", url)), b(NodeArgs(dir, "b", url));
  ASSERT_TRUE(a.Start());
  ASSERT_TRUE(b.Start());

  // Created on a: three shards, two replicas each, so both nodes hold all.
  {
    grpc::Status st = Create(a.Channel(), "papers", 3, 2);
    ASSERT_TRUE(st.ok()) << st.error_message();
  }
  // Written through b (which learns of the collection from the map), read on a.
  v1::UpsertResponse w;
  grpc::Status st = Upsert(b, 0, 40, "apple", &w);
  ASSERT_TRUE(st.ok()) << st.error_message();
  ASSERT_EQ(w.ids_size(), 40);
  ASSERT_FALSE(w.consistency_token().empty());
  v1::SearchResponse r;
  st = Search(a, "papers", "apple", w.consistency_token(), &r);
  ASSERT_TRUE(st.ok()) << st.error_message();
  EXPECT_EQ(r.hits_size(), 40);

  {
    auto docs = v1::Documents::NewStub(a.Channel());
    v1::BulkIngestResponse bresp;
    grpc::ClientContext bctx;
    auto writer = docs->BulkIngest(&bctx, &bresp);
    v1::IngestBatch batch;
    batch.set_collection("papers");
    auto* d = batch.add_documents();
    d->set_id("streamed");
    d->set_text("streamed text");
    writer->Write(batch);
    writer->WritesDone();
    st = writer->Finish();
    // A stream into a sharded collection goes through the shard logs too.
    ASSERT_TRUE(st.ok()) << st.error_message();
    EXPECT_EQ(bresp.documents(), 1u);
    ASSERT_FALSE(bresp.consistency_token().empty());
    v1::SearchResponse found;
    st = Search(b, "papers", "streamed", bresp.consistency_token(), &found);
    ASSERT_TRUE(st.ok()) << st.error_message();
    ASSERT_EQ(found.hits_size(), 1);
    EXPECT_EQ(found.hits(0).id(), "streamed");
  }

  // Cluster status: both nodes live; every replica's lag reaches 0 (the
  // positions come from heartbeats every 2 s: waited for, bounded).
  {
    auto admin = v1::Admin::NewStub(a.Channel());
    v1::ClusterStatusResponse cs;
    const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(30);
    bool caught_up = false;
    while (!caught_up && std::chrono::steady_clock::now() < until) {
      grpc::ClientContext ctx;
      st = admin->ClusterStatus(&ctx, v1::ClusterStatusRequest(), &cs);
      ASSERT_TRUE(st.ok()) << st.error_message();
      caught_up = true;
      for (const auto& c : cs.collections()) {
        for (const auto& sh : c.shard_status()) {
          for (const auto& r : sh.replicas()) caught_up = caught_up && r.live() && r.lag() == 0;
        }
      }
      if (!caught_up) std::this_thread::sleep_for(std::chrono::milliseconds(200));
    }
    EXPECT_TRUE(caught_up) << cs.DebugString();
    EXPECT_EQ(cs.node_id(), "a");
    EXPECT_EQ(cs.nodes_size(), 2);
    ASSERT_EQ(cs.collections_size(), 1);
    EXPECT_EQ(cs.collections(0).name(), "papers");
    ASSERT_EQ(cs.collections(0).shard_status_size(), 3);
    uint64_t total = 0;
    for (const auto& sh : cs.collections(0).shard_status()) {
      EXPECT_EQ(sh.replicas_size(), 2);
      total += sh.last_sequence();
    }
    EXPECT_GE(total, 41u);  // 40 upserts and the streamed one, in three streams
    const CommandResult cli = RunNeodbCapture(
        absl::StrCat("cluster status --server 127.0.0.1:", a.port()), dir.Sub(""));
    EXPECT_EQ(cli.status, 0) << cli.err;
    EXPECT_NE(cli.out.find("\"papers\""), std::string::npos) << cli.out;
    // Two nodes, two replicas of each shard: already placed as the nodes
    // live now, so a rebalance moves nothing (cluster_node_test moves some).
    const CommandResult rb = RunNeodbCapture(
        absl::StrCat("cluster rebalance papers --server 127.0.0.1:", a.port()), dir.Sub(""));
    EXPECT_EQ(rb.status, 0) << rb.err;
    EXPECT_NE(rb.out.find("\"moves\":[]"), std::string::npos) << rb.out;
  }

  // b dies; a takes writes; b comes back on its data and catches up.
  b.Kill();
  v1::UpsertResponse w2;
  st = Upsert(a, 40, 60, "river", &w2);
  ASSERT_TRUE(st.ok()) << st.error_message();
  {
    auto docs = v1::Documents::NewStub(a.Channel());
    v1::DeleteRequest req;
    req.set_collection("papers");
    req.add_ids("doc0");
    v1::DeleteResponse resp;
    grpc::ClientContext ctx;
    st = docs->Delete(&ctx, req, &resp);
    ASSERT_TRUE(st.ok()) << st.error_message();
    ASSERT_FALSE(resp.consistency_token().empty());
    ServerProcess b2(NodeArgs(dir, "b", url));
    ASSERT_TRUE(b2.Start());
    // Each token names the shards its write touched: wait for both.
    ASSERT_TRUE(Search(b2, "papers", "river", w2.consistency_token(), &r).ok());
    EXPECT_EQ(r.hits_size(), 20);
    st = Search(b2, "papers", "apple", resp.consistency_token(), &r);
    ASSERT_TRUE(st.ok()) << st.error_message();
    EXPECT_EQ(r.hits_size(), 39);  // doc0 deleted while b was down ("streamed" has no "apple")
    // A token is for sharded collections only; a bad one is refused.
    EXPECT_EQ(Search(b2, "papers", "apple", "nonsense", &r).error_code(),
              grpc::StatusCode::INVALID_ARGUMENT);
  }

  // A server alone refuses shards, with the reason.
  ServerProcess alone({"--data-dir", dir.Sub("alone"), "--fake-model", "32"});
  ASSERT_TRUE(alone.Start());
  auto cols = v1::Collections::NewStub(alone.Channel());
  v1::CreateCollectionRequest req;
  req.mutable_spec()->set_name("papers");
  req.set_shards(2);
  v1::CreateCollectionResponse resp;
  grpc::ClientContext ctx;
  st = cols->Create(&ctx, req, &resp);
  EXPECT_EQ(st.error_code(), grpc::StatusCode::FAILED_PRECONDITION);
  EXPECT_NE(st.error_message().find("--nats"), std::string::npos) << st.error_message();
  req.set_shards(0);
  grpc::ClientContext ctx2;
  ASSERT_TRUE(cols->Create(&ctx2, req, &resp).ok());
  EXPECT_EQ(Search(alone, "papers", "apple", "0:1", &r).error_code(),
            grpc::StatusCode::INVALID_ARGUMENT);
  auto admin = v1::Admin::NewStub(alone.Channel());
  v1::ClusterStatusResponse cs;
  grpc::ClientContext ctx3;
  EXPECT_EQ(admin->ClusterStatus(&ctx3, v1::ClusterStatusRequest(), &cs).error_code(),
            grpc::StatusCode::FAILED_PRECONDITION);
}

// Three nodes, three shards, one replica each: however the placement falls,
// at least one node lacks a shard (three replicas, three nodes, and a node
// holding all three leaves two with none), so its searches fan out to the
// others and merge; every node must answer with the whole collection.
TEST(ClusterServeTest, SearchesFanOutToTheNodesHoldingTheOtherShards) {
  TestDir dir("cluster_fanout");
  auto nats = cluster::testing::NatsServerProcess::Start(dir.Sub("nats"));
  ASSERT_TRUE(nats.ok()) << nats.status();
  std::vector<std::unique_ptr<ServerProcess>> nodes;
  ASSERT_NO_FATAL_FAILURE(StartThree(dir, (*nats)->url(), &nodes));
  {
    grpc::Status st = Create(nodes[0]->Channel(), "papers", 3, 1);
    ASSERT_TRUE(st.ok()) << st.error_message();
  }
  v1::UpsertResponse w;
  grpc::Status st = Upsert(*nodes[1], 0, 60, "apple", &w);
  ASSERT_TRUE(st.ok()) << st.error_message();
  for (size_t i = 0; i < nodes.size(); ++i) {
    v1::SearchResponse r;
    st = Search(*nodes[i], "papers", "apple", w.consistency_token(), &r);
    ASSERT_TRUE(st.ok()) << "node " << i << ": " << st.error_message();
    const std::set<std::string> ids = HitIds(r);
    EXPECT_EQ(ids.size(), 60u) << "node " << i;  // every shard answered, none twice
    // Vector mode: scores are the same vectors' on every node, so every
    // node ranks alike.
    std::vector<std::string> got;
    ASSERT_NO_FATAL_FAILURE(VectorTop(*nodes[i], "apple number 7", 10, &got));
    ASSERT_EQ(got.size(), 10u);
    EXPECT_EQ(got[0], "doc7");
    static std::vector<std::string> first;
    if (i == 0) first = got;
    EXPECT_EQ(got, first) << "node " << i;
  }
}

// Admin Reindex of a sharded collection (what `neodb reindex` and `adapt
// --apply` call) runs on the cluster: asked of one node, which reports its
// progress, it moves the collection to a new generation of its log, and
// every node then serves the same documents, writes included, through it.
// Drop, asked of one node, takes it from every node and frees the name.
TEST(ClusterServeTest, AReindexOrADropAskedOfOneNodeActsOnTheWholeCluster) {
  TestDir dir("cluster_reindex");
  auto nats = cluster::testing::NatsServerProcess::Start(dir.Sub("nats"));
  ASSERT_TRUE(nats.ok()) << nats.status();
  std::vector<std::unique_ptr<ServerProcess>> nodes;
  ASSERT_NO_FATAL_FAILURE(StartThree(dir, (*nats)->url(), &nodes));
  ASSERT_TRUE(Create(nodes[0]->Channel(), "papers", 3, 1).ok());
  v1::UpsertResponse w;
  ASSERT_TRUE(Upsert(*nodes[1], 0, 60, "apple", &w).ok());
  auto admin = v1::Admin::NewStub(nodes[2]->Channel());
  {
    v1::ReindexRequest req;
    req.set_collection("papers");
    v1::ReindexResponse resp;
    grpc::ClientContext ctx;
    grpc::Status st = admin->Reindex(&ctx, req, &resp);
    ASSERT_TRUE(st.ok()) << st.error_message();
  }
  v1::ReindexStatusResponse status;
  const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(120);
  while (std::chrono::steady_clock::now() < until) {
    v1::ReindexStatusRequest req;
    req.set_collection("papers");
    grpc::ClientContext ctx;
    grpc::Status st = admin->ReindexStatus(&ctx, req, &status);
    ASSERT_TRUE(st.ok()) << st.error_message();
    if (status.state() != v1::ReindexStatusResponse::RUNNING) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  ASSERT_EQ(status.state(), v1::ReindexStatusResponse::DONE) << status.error();
  EXPECT_EQ(status.done(), status.total());
  EXPECT_GE(status.total(), 60u);
  // A write after the switch, then every node answers with all 61 (a node
  // still rebuilding its copy is answered for by another, or retried).
  v1::UpsertResponse after;
  grpc::Status st;
  for (int attempt = 0; attempt < 100; ++attempt) {
    st = Upsert(*nodes[0], 60, 61, "apple", &after);
    if (st.error_code() != grpc::StatusCode::ABORTED &&
        st.error_code() != grpc::StatusCode::UNAVAILABLE) {
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  ASSERT_TRUE(st.ok()) << st.error_message();
  for (size_t i = 0; i < nodes.size(); ++i) {
    v1::SearchResponse r;
    st = Search(*nodes[i], "papers", "apple", after.consistency_token(), &r);
    ASSERT_TRUE(st.ok()) << "node " << i << ": " << st.error_message();
    const std::set<std::string> ids = HitIds(r);
    EXPECT_EQ(ids.size(), 61u) << "node " << i;
    std::vector<std::string> got;
    ASSERT_NO_FATAL_FAILURE(VectorTop(*nodes[i], "apple number 7", 3, &got));
    ASSERT_GE(got.size(), 1u);
    EXPECT_EQ(got[0], "doc7") << "node " << i;
  }

  // Dropped through one node: gone from every node; the name is free again,
  // and what it then holds is the new collection's alone.
  {
    auto cols = v1::Collections::NewStub(nodes[1]->Channel());
    v1::DropCollectionRequest req;
    req.set_name("papers");
    v1::DropCollectionResponse resp;
    grpc::ClientContext ctx;
    st = cols->Drop(&ctx, req, &resp);
    ASSERT_TRUE(st.ok()) << st.error_message();
    grpc::ClientContext again;
    EXPECT_EQ(cols->Drop(&again, req, &resp).error_code(), grpc::StatusCode::NOT_FOUND);
  }
  for (size_t i = 0; i < nodes.size(); ++i) {
    v1::SearchResponse r;
    grpc::Status gone;
    for (int attempt = 0; attempt < 100; ++attempt) {  // each node drops at its next reconcile
      gone = Search(*nodes[i], "papers", "apple", "", &r);
      if (gone.error_code() == grpc::StatusCode::NOT_FOUND) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    EXPECT_EQ(gone.error_code(), grpc::StatusCode::NOT_FOUND) << "node " << i;
  }
  ASSERT_TRUE(Create(nodes[2]->Channel(), "papers", 3, 1).ok());
  v1::UpsertResponse fresh;
  ASSERT_TRUE(Upsert(*nodes[0], 100, 105, "pear", &fresh).ok());
  for (size_t i = 0; i < nodes.size(); ++i) {
    v1::SearchResponse r;
    st = Search(*nodes[i], "papers", "pear apple", fresh.consistency_token(), &r);
    ASSERT_TRUE(st.ok()) << "node " << i << ": " << st.error_message();
    const std::set<std::string> ids = HitIds(r);
    EXPECT_EQ(ids, (std::set<std::string>{"doc100", "doc101", "doc102", "doc103", "doc104"}))
        << "node " << i;
  }
}

// A sharded collection ranks as one collection would: three nodes, three
// shards with two replicas each (so searches fan out), against an unsharded
// collection with the same documents on one node. Vector: the same hits and
// scores. Keyword and hybrid: the same too, because the fan-out ranks by the
// whole collection's BM25 statistics (fan_out.h) and fuses the merged legs
// itself; what per-node statistics would have given instead is printed.
TEST(ClusterServeTest, AShardedCollectionRanksAsOneCollectionWould) {
  TestDir dir("cluster_ranks");
  auto nats = cluster::testing::NatsServerProcess::Start(dir.Sub("nats"));
  ASSERT_TRUE(nats.ok()) << nats.status();
  const std::string url = (*nats)->url();
  std::vector<std::unique_ptr<ServerProcess>> nodes;
  for (const char* id : {"a", "b", "c"}) {
    std::vector<std::string> args = NodeArgs(dir, id, url);
    args.push_back("--metrics-listen");
    args.push_back("127.0.0.1:0");
    nodes.push_back(std::make_unique<ServerProcess>(args));
    ASSERT_TRUE(nodes.back()->Start());
  }
  // Two replicas of three shards on three nodes: a node that lacks a shard
  // asks one that holds more shards than it answers for, whose statistics
  // must then count only those (KeywordStats' shards).
  for (const auto& [name, shards] : {std::pair<std::string, int>{"sharded", 3}, {"whole", 0}}) {
    grpc::Status st = Create(nodes[0]->Channel(), name, shards, shards > 0 ? 2 : 0);
    ASSERT_TRUE(st.ok()) << name << ": " << st.error_message();
  }
  // 400 documents over a skewed vocabulary (word i about 1/(i+1) as often
  // as word 0) and lengths 4..43, so that the shards' statistics differ.
  uint64_t state = 12345;
  auto next = [&state] {
    state = state * 6364136223846793005ULL + 1442695040888963407ULL;
    return static_cast<uint32_t>(state >> 33);
  };
  auto word = [&next] {
    const uint32_t r = next() % 1000;  // rank ~ 1000/(r+1) - 1: skewed to small
    return absl::StrCat("w", std::min<uint32_t>(1000 / (r + 1) - 1, 150));
  };
  v1::UpsertRequest up;
  for (int i = 0; i < 400; ++i) {
    auto* d = up.add_documents();
    d->set_id(absl::StrCat("doc", i));
    std::string text;
    const int len = 4 + static_cast<int>(next() % 40);
    for (int j = 0; j < len; ++j) absl::StrAppend(&text, j ? " " : "", word());
    d->set_text(text);
  }
  std::string token;
  for (const char* name : {"sharded", "whole"}) {
    auto docs = v1::Documents::NewStub(nodes[0]->Channel());
    up.set_collection(name);
    v1::UpsertResponse resp;
    grpc::ClientContext ctx;
    grpc::Status st = docs->Upsert(&ctx, up, &resp);
    ASSERT_TRUE(st.ok()) << name << ": " << st.error_message();
    if (!resp.consistency_token().empty()) token = resp.consistency_token();
  }
  auto search = [&](ServerProcess& node, const std::string& collection, const std::string& query,
                    const std::string& mode, bool local_only, v1::SearchResponse* out) {
    auto stub = v1::Search::NewStub(node.Channel());
    v1::NearTextRequest req;
    req.set_collection(collection);
    req.set_query(query);
    req.set_k(10);
    req.set_mode(mode);
    req.set_local_only(local_only);
    if (collection == "sharded") req.set_consistency_token(token);
    grpc::ClientContext ctx;
    ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(60));
    return stub->NearText(&ctx, req, out);
  };
  int queries = 0, local_stats_same = 0;
  double local_stats_overlap = 0;
  for (int q = 0; q < 20; ++q) {
    std::string query = absl::StrCat(word(), " ", word());
    if (q % 3 == 0) absl::StrAppend(&query, " w", 3 + q);
    for (const char* mode : {"keyword", "hybrid", "vector"}) {
      v1::SearchResponse whole;
      grpc::Status st = search(*nodes[0], "whole", query, mode, false, &whole);
      ASSERT_TRUE(st.ok()) << st.error_message();
      for (size_t i = 0; i < nodes.size(); ++i) {
        v1::SearchResponse got;
        st = search(*nodes[i], "sharded", query, mode, false, &got);
        ASSERT_TRUE(st.ok()) << "node " << i << ": " << st.error_message();
        ASSERT_EQ(got.hits_size(), whole.hits_size()) << mode << " '" << query << "' node " << i;
        for (int h = 0; h < got.hits_size(); ++h) {
          EXPECT_EQ(got.hits(h).id(), whole.hits(h).id())
              << mode << " '" << query << "' node " << i << " rank " << h + 1;
          EXPECT_NEAR(got.hits(h).score(), whole.hits(h).score(),
                      1e-5 * std::max(1.0f, std::abs(whole.hits(h).score())))
              << mode << " '" << query << "' node " << i << " rank " << h + 1;
        }
      }
      if (std::string(mode) != "keyword") continue;
      // What each node's own statistics would give: every node's local
      // answer merged by score (what the fan-out did before).
      std::vector<std::pair<float, std::string>> merged;
      for (auto& n : nodes) {
        v1::SearchResponse part;
        st = search(*n, "sharded", query, mode, true, &part);
        ASSERT_TRUE(st.ok()) << st.error_message();
        for (const auto& h : part.hits()) merged.push_back({-h.score(), h.id()});
      }
      std::sort(merged.begin(), merged.end());
      std::set<std::string> seen;  // a document held on two nodes: its best
      merged.erase(std::remove_if(merged.begin(), merged.end(),
                                  [&seen](const auto& h) { return !seen.insert(h.second).second; }),
                   merged.end());
      std::set<std::string> top_whole, top_local;
      std::vector<std::string> local_order, whole_order;
      for (const auto& h : whole.hits()) top_whole.insert(h.id()), whole_order.push_back(h.id());
      for (size_t h = 0; h < merged.size() && h < 10; ++h) {
        top_local.insert(merged[h].second);
        local_order.push_back(merged[h].second);
      }
      int common = 0;
      for (const auto& id : top_local) common += top_whole.count(id);
      ++queries;
      local_stats_overlap += top_whole.empty() ? 1.0 : common / static_cast<double>(top_whole.size());
      local_stats_same += local_order == whole_order;
    }
  }
  std::cout << "keyword, per-node statistics instead of the collection's, over " << queries
            << " queries: top-10 overlap with one collection " << local_stats_overlap / queries
            << ", same order in " << local_stats_same << "\n";

  // The metrics: each node's replicas (6 = 3 shards x 2), and the fan-outs
  // of the nodes that lack a shard, by mode and by the node they called.
  int replicas = 0;
  std::set<std::string> modes;
  bool called_other = false;
  for (auto& n : nodes) {
    httplib::Client http("127.0.0.1", n->metrics_port());
    auto r = http.Get("/metrics");
    ASSERT_TRUE(r) << httplib::to_string(r.error());
    ASSERT_EQ(r->status, 200);
    const std::vector<std::string> lines = absl::StrSplit(r->body, '\n');
    for (const std::string& line : lines) {
      if (absl::StartsWith(line, "neodb_replica_position{collection=\"sharded\"")) ++replicas;
      if (absl::StartsWith(line, "neodb_replica_healthy{")) EXPECT_TRUE(absl::EndsWith(line, " 1")) << line;
      if (absl::StartsWith(line, "neodb_fanout_search_duration_seconds_count{mode=\"")) {
        modes.insert(line.substr(line.find('"') + 1, line.rfind('"') - line.find('"') - 1));
      }
      if (absl::StartsWith(line, "neodb_fanout_calls_total{") &&
          absl::StrContains(line, "code=\"OK\"")) {
        called_other = true;
      }
    }
  }
  EXPECT_EQ(replicas, 6);
  EXPECT_EQ(modes, (std::set<std::string>{"hybrid", "keyword", "vector"}));
  EXPECT_TRUE(called_other);
}

// TLS between nodes: two nodes serving TLS that asks clients for
// certificates (--tls-client-ca) hold a collection's two shards, one replica
// each; every node answers with the whole collection, so each fan-out dialled
// the other over TLS with its own certificate (PeerChannels).
TEST(ClusterServeTest, FanOutsDialTheOtherNodesOverMutualTls) {
  TestDir dir("cluster_tls");
  MakeCertificates(dir);
  auto nats = cluster::testing::NatsServerProcess::Start(dir.Sub("nats"));
  ASSERT_TRUE(nats.ok()) << nats.status();
  std::vector<std::unique_ptr<ServerProcess>> nodes;
  for (const char* id : {"a", "b"}) {
    std::vector<std::string> args = NodeArgs(dir, id, (*nats)->url());
    for (const std::string& a : {std::string("--tls-cert"), dir.Sub("server.pem"),
                                 std::string("--tls-key"), dir.Sub("server.key"),
                                 std::string("--tls-client-ca"), dir.Sub("ca.pem")}) {
      args.push_back(a);
    }
    nodes.push_back(std::make_unique<ServerProcess>(args));
    ASSERT_TRUE(nodes.back()->Start());
  }
  auto channel = [&](size_t i) { return TlsChannel(dir, nodes[i]->port(), /*client_cert=*/true); };
  {
    grpc::Status st = Create(channel(0), "papers", 4, 1);
    ASSERT_TRUE(st.ok()) << st.error_message();
  }
  v1::UpsertRequest up;
  up.set_collection("papers");
  for (int i = 0; i < 30; ++i) {
    auto* d = up.add_documents();
    d->set_id(absl::StrCat("doc", i));
    d->set_text(absl::StrCat("apple number ", i));
  }
  v1::UpsertResponse w;
  {
    grpc::ClientContext ctx;
    grpc::Status st = v1::Documents::NewStub(channel(1))->Upsert(&ctx, up, &w);
    ASSERT_TRUE(st.ok()) << st.error_message();
  }
  int fanned_out = 0;
  for (size_t i = 0; i < nodes.size(); ++i) {
    v1::NearTextRequest req;
    req.set_collection("papers");
    req.set_query("apple");
    req.set_k(100);
    req.set_mode("keyword");
    req.set_consistency_token(w.consistency_token());
    v1::SearchResponse r;
    grpc::ClientContext ctx;
    ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(60));
    grpc::Status st = v1::Search::NewStub(channel(i))->NearText(&ctx, req, &r);
    ASSERT_TRUE(st.ok()) << "node " << i << ": " << st.error_message();
    EXPECT_EQ(r.hits_size(), 30) << "node " << i;
    // Whether this node lacked a shard (and so fanned out): its metrics.
    v1::ClusterStatusResponse cs;
    grpc::ClientContext sctx;
    ASSERT_TRUE(v1::Admin::NewStub(channel(i))->ClusterStatus(&sctx, {}, &cs).ok());
    for (const auto& sh : cs.collections(0).shard_status()) {
      bool here = false;
      for (const auto& rep : sh.replicas()) here = here || rep.node_id() == cs.node_id();
      if (!here) {
        ++fanned_out;
        break;
      }
    }
  }
  // Four shards on two nodes by rendezvous hashing: at least one node lacks
  // one unless one node got all four (1 in 8 names); "papers" is not one.
  EXPECT_GE(fanned_out, 1);
}

}  // namespace
}  // namespace neodb::testing
