// `neodb serve --nats` end to end: two server processes joined through a real
// nats-server (all three started here on ports the OS picks) serve a sharded
// collection over gRPC. A collection created on one node appears on the
// other; writes taken by either (unary or streamed) are read on the other
// with the consistency token; Drop refuses a sharded collection; a node killed with
// SIGKILL and restarted on its data directory resumes from its stored
// positions and reads writes made while it was down; a server alone refuses
// shards.
#include <memory>
#include <set>
#include <thread>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "neodb/v1/neodb.grpc.pb.h"
#include "tests/cluster/nats_server_process.h"
#include "tests/integration/server_process.h"
#include "tests/integration/test_env.h"

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
    auto cols = v1::Collections::NewStub(a.Channel());
    v1::CreateCollectionRequest req;
    req.mutable_spec()->set_name("papers");
    req.set_shards(3);
    req.set_replicas(2);
    v1::CreateCollectionResponse resp;
    grpc::ClientContext ctx;
    grpc::Status st = cols->Create(&ctx, req, &resp);
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

  // Drop is not built for sharded collections: refused, not done on one node.
  {
    auto cols = v1::Collections::NewStub(a.Channel());
    v1::DropCollectionRequest req;
    req.set_name("papers");
    v1::DropCollectionResponse resp;
    grpc::ClientContext ctx;
    st = cols->Drop(&ctx, req, &resp);
    EXPECT_EQ(st.error_code(), grpc::StatusCode::FAILED_PRECONDITION) << st.error_message();
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
  const std::string url = (*nats)->url();
  std::vector<std::unique_ptr<ServerProcess>> nodes;
  for (const char* id : {"a", "b", "c"}) {
    nodes.push_back(std::make_unique<ServerProcess>(NodeArgs(dir, id, url)));
    ASSERT_TRUE(nodes.back()->Start());
  }
  {
    auto cols = v1::Collections::NewStub(nodes[0]->Channel());
    v1::CreateCollectionRequest req;
    req.mutable_spec()->set_name("papers");
    req.set_shards(3);
    req.set_replicas(1);
    v1::CreateCollectionResponse resp;
    grpc::ClientContext ctx;
    grpc::Status st = cols->Create(&ctx, req, &resp);
    ASSERT_TRUE(st.ok()) << st.error_message();
  }
  v1::UpsertResponse w;
  grpc::Status st = Upsert(*nodes[1], 0, 60, "apple", &w);
  ASSERT_TRUE(st.ok()) << st.error_message();
  for (size_t i = 0; i < nodes.size(); ++i) {
    v1::SearchResponse r;
    st = Search(*nodes[i], "papers", "apple", w.consistency_token(), &r);
    ASSERT_TRUE(st.ok()) << "node " << i << ": " << st.error_message();
    std::set<std::string> ids;
    for (const auto& h : r.hits()) ids.insert(h.id());
    EXPECT_EQ(ids.size(), 60u) << "node " << i;  // every shard answered, none twice
    // Vector mode: scores are the same vectors' on every node, so every
    // node ranks alike.
    auto search = v1::Search::NewStub(nodes[i]->Channel());
    v1::NearTextRequest req;
    req.set_collection("papers");
    req.set_query("apple number 7");
    req.set_k(10);
    req.set_mode("vector");
    grpc::ClientContext ctx;
    v1::SearchResponse vr;
    st = search->NearText(&ctx, req, &vr);
    ASSERT_TRUE(st.ok()) << st.error_message();
    ASSERT_EQ(vr.hits_size(), 10);
    EXPECT_EQ(vr.hits(0).id(), "doc7");
    static std::vector<std::string> first;
    std::vector<std::string> got;
    for (const auto& h : vr.hits()) got.push_back(h.id());
    if (i == 0) first = got;
    EXPECT_EQ(got, first) << "node " << i;
  }
}

}  // namespace
}  // namespace neodb::testing
