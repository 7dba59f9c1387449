// The cluster map and the nodes that follow it, against a real nats-server:
// a sharded collection created on one node appears on every node, each
// shard's replicas run exactly where the placement says, writes taken by any
// node land on those replicas only; the map's entries are checked as hostile
// input; a node that stops beating leaves the live set; a node on another
// model refuses to replicate.
#include <unistd.h>

#include <filesystem>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "cluster/cluster_map.h"
#include "cluster/cluster_node.h"
#include "cluster/shard_map.h"
#include "engine/database.h"
#include "engine/fake_embedder.h"
#include "gtest/gtest.h"
#include "tests/cluster/cluster_test_util.h"
#include "tests/cluster/nats_server_process.h"

namespace neodb::cluster {
namespace {

namespace fs = std::filesystem;
using engine::Database;

constexpr int kDim = 16;
const absl::Duration kWait = absl::Seconds(30);  // a bound for a hung test, never a pace

TEST(PlaceShardsTest, EachShardOnDistinctNodesTheSameEverywhere) {
  const std::vector<std::string> nodes = {"a", "b", "c", "d"};
  auto p = PlaceShards("papers", 8, 3, nodes);
  ASSERT_TRUE(p.ok());
  std::map<std::string, int> load;
  for (const auto& shard : *p) {
    ASSERT_EQ(shard.size(), 3u);
    EXPECT_EQ(std::set<std::string>(shard.begin(), shard.end()).size(), 3u);
    for (const auto& n : shard) ++load[n];
  }
  EXPECT_EQ(load.size(), 4u);  // 24 replicas over 4 nodes: every node holds some
  EXPECT_EQ(*PlaceShards("papers", 8, 3, {"d", "c", "b", "a"}), *p);  // order-free
  EXPECT_EQ(PlaceShards("papers", 2, 3, {"a", "b"}).status().code(),
            absl::StatusCode::kFailedPrecondition);
  EXPECT_FALSE(PlaceShards("papers", 0, 1, nodes).ok());
  EXPECT_FALSE(PlaceShards("papers", 1, 6, nodes).ok());
}

TEST(ShardedCollectionCodecTest, RoundTripsAndRefusesHostileEntries) {
  ShardedCollection c;
  c.spec.name = "papers";
  c.spec.index_spec = "Flat";
  c.spec.dimension = 16;
  c.model_id = "fake-16-1";
  c.shards = 2;
  c.replicas = 1;
  c.placement = {{"n0"}, {"n1"}};
  auto back = DecodeShardedCollection(EncodeShardedCollection(c));
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(back->spec.name, "papers");
  EXPECT_EQ(back->placement, c.placement);
  EXPECT_EQ(back->model_id, c.model_id);
  const std::string good = EncodeShardedCollection(c);
  const std::string spec = good.substr(good.find("\"spec\":\"") + 8);
  const std::string spec64 = spec.substr(0, spec.find('"'));
  for (const std::string& bad : {
           std::string("not json"), std::string("[]"), std::string("{}"),
           absl::StrCat(R"({"spec":")", spec64, R"(","model_id":"m","shards":2,"replicas":1,)",
                        R"("placement":[["n0"]]})"),
           absl::StrCat(R"({"spec":")", spec64, R"(","model_id":"m","shards":1,"replicas":1,)",
                        R"("placement":[["bad id!"]]})"),
           absl::StrCat(R"({"spec":")", spec64, R"(","model_id":"m","shards":0,"replicas":1,)",
                        R"("placement":[]})"),
           absl::StrCat(R"({"spec":")", spec64, R"(","model_id":"m","shards":1,"replicas":2,)",
                        R"("placement":[["n0"]]})"),
           std::string(R"({"spec":"!!","model_id":"m","shards":1,"replicas":1,"placement":[["a"]]})"),
           std::string(R"({"spec":"AAAA","model_id":"m","shards":1,"replicas":1,"placement":[["a"]]})"),
       }) {
    auto r = DecodeShardedCollection(bad);
    EXPECT_FALSE(r.ok()) << bad;
  }
}

// doc0 .. doc<n-1>, "text <i>" each.
std::vector<engine::DocumentInput> Docs(int n) {
  std::vector<engine::DocumentInput> docs;
  for (int i = 0; i < n; ++i) {
    engine::DocumentInput d;
    d.id = absl::StrCat("doc", i);
    d.text = absl::StrCat("text ", i);
    docs.push_back(std::move(d));
  }
  return docs;
}

using Node = testing::InProcessNode;

class ClusterNodeTest : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = testing::FreshTestRoot("neodb_cluster_node");
    auto server = testing::NatsServerProcess::Start((root_ / "nats").string());
    ASSERT_TRUE(server.ok()) << server.status();
    server_ = std::move(*server);
  }
  void TearDown() override {
    for (auto& n : nodes_) {
      n->node.reset();
      n->map.reset();
      n->nats.reset();
      n->db.reset();
    }
    server_.reset();
    fs::remove_all(root_);
  }

  Node& AddNode(uint64_t model_seed = 1) {
    auto n = std::make_unique<Node>();
    n->id = absl::StrCat("n", nodes_.size());
    const engine::DatabaseOptions o = testing::NodeOptions((root_ / n->id).string());
    auto db = Database::Open(o, std::make_unique<engine::FakeEmbedder>(kDim, 64, model_seed));
    EXPECT_TRUE(db.ok()) << db.status();
    n->db = std::move(*db);
    NatsClientOptions no;
    no.servers = {server_->url()};
    auto nc = NatsClient::Connect(no);
    EXPECT_TRUE(nc.ok()) << nc.status();
    n->nats = std::move(*nc);
    auto map = ClusterMap::Open(*n->nats, {});
    EXPECT_TRUE(map.ok()) << map.status();
    n->map = std::move(*map);
    ClusterNodeOptions co;
    co.node_id = n->id;
    n->node = std::make_unique<ClusterNode>(n->db.get(), n->nats.get(), n->map.get(), co);
    nodes_.push_back(std::move(n));
    return *nodes_.back();
  }

  fs::path root_;
  std::unique_ptr<testing::NatsServerProcess> server_;
  std::vector<std::unique_ptr<Node>> nodes_;
};

TEST_F(ClusterNodeTest, ACollectionCreatedOnOneNodeIsReplicatedWhereItIsPlaced) {
  for (int i = 0; i < 3; ++i) ASSERT_TRUE(AddNode().node->Start().ok());
  db::CollectionSpec spec;
  spec.name = "papers";
  auto c = nodes_[0]->node->CreateCollection(spec, 4, 2, /*log_replicas=*/1);
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(nodes_[1]->node->CreateCollection(spec, 4, 2, 1).status().code(),
            absl::StatusCode::kAlreadyExists);
  for (auto& n : nodes_) ASSERT_TRUE(n->node->Reconcile().ok());
  for (auto& n : nodes_) {
    EXPECT_TRUE(n->db->DescribeCollection("papers").ok()) << n->id;
    for (uint32_t s = 0; s < 4; ++s) {
      const auto& placed = c->placement[s];
      const bool here = std::find(placed.begin(), placed.end(), n->id) != placed.end();
      EXPECT_EQ(n->node->Replica("papers", s) != nullptr, here) << n->id << " shard " << s;
    }
  }
  // Writes through node 1, deletes through node 2; every node reads its writes.
  const std::vector<engine::DocumentInput> docs = Docs(80);
  auto w = nodes_[1]->node->Upsert("papers", docs, absl::Now() + kWait);
  ASSERT_TRUE(w.ok()) << w.status();
  auto d = nodes_[2]->node->Delete("papers", {"doc0", "doc1", "doc2"}, absl::Now() + kWait);
  ASSERT_TRUE(d.ok()) << d.status();
  std::map<std::string, int> copies;
  for (auto& n : nodes_) {
    for (uint32_t s = 0; s < 4; ++s) {
      if (ShardReplica* r = n->node->Replica("papers", s)) {
        ASSERT_TRUE(r->CatchUp(kWait).ok());
      }
    }
    auto page = n->db->List("papers", "", 1000);
    ASSERT_TRUE(page.ok());
    for (const db::Document& doc : page->documents) {
      ++copies[doc.id];
      // Only the shards placed here.
      const uint32_t s = ShardOf(doc.id, 4);
      const auto& placed = c->placement[s];
      EXPECT_NE(std::find(placed.begin(), placed.end(), n->id), placed.end())
          << doc.id << " on " << n->id;
    }
  }
  EXPECT_EQ(copies.size(), 77u);
  for (const auto& [id, n] : copies) EXPECT_EQ(n, 2) << id;  // two replicas each
  // WaitFor with the token: on a node holding every shard of it, or refused.
  for (auto& n : nodes_) {
    absl::Status st = n->node->WaitFor("papers", w->token, kWait);
    if (!st.ok()) {
      EXPECT_EQ(st.code(), absl::StatusCode::kFailedPrecondition) << st;
    }
  }
}

TEST_F(ClusterNodeTest, TooFewNodesAndAnotherModelAreRefused) {
  Node& a = AddNode();
  ASSERT_TRUE(a.node->Start().ok());
  db::CollectionSpec spec;
  spec.name = "papers";
  auto c = a.node->CreateCollection(spec, 2, 2, 1);
  EXPECT_EQ(c.status().code(), absl::StatusCode::kFailedPrecondition) << c.status();
  EXPECT_FALSE(a.map->Get("papers").ok());  // nothing reached the map
  ASSERT_TRUE(a.node->CreateCollection(spec, 2, 1, 1).ok());
  Node& other = AddNode(/*model_seed=*/2);  // another model
  absl::Status st = other.node->Start();
  EXPECT_EQ(st.code(), absl::StatusCode::kFailedPrecondition) << st;
  EXPECT_NE(st.message().find("same model"), std::string::npos) << st;
  EXPECT_EQ(other.node->Replica("papers", 0), nullptr);
  EXPECT_EQ(other.node->Replica("papers", 1), nullptr);
}

TEST_F(ClusterNodeTest, ANodeThatStopsBeatingLeavesTheLiveSet) {
  // The first node to open the map makes the buckets (node TTL 10 s, the
  // default); later ones bind to them as they are.
  Node& a = AddNode();
  auto map = ClusterMap::Open(*a.nats, {});
  ASSERT_TRUE(map.ok()) << map.status();
  ASSERT_TRUE((*map)->Heartbeat("ghost", "").ok());  // once, never again
  ASSERT_TRUE(a.node->Start().ok());                 // beats every 2 s
  auto live = (*map)->LiveNodes();
  ASSERT_TRUE(live.ok());
  EXPECT_EQ(std::count(live->begin(), live->end(), "ghost"), 1);
  const absl::Time until = absl::Now() + kWait;
  while (absl::Now() < until) {
    live = (*map)->LiveNodes();
    ASSERT_TRUE(live.ok());
    if (std::count(live->begin(), live->end(), "ghost") == 0) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  EXPECT_EQ(std::count(live->begin(), live->end(), "ghost"), 0);
  EXPECT_EQ(std::count(live->begin(), live->end(), "n0"), 1);  // still beating
  EXPECT_FALSE(CheckNodeId("bad id").ok());
  EXPECT_FALSE((*map)->Heartbeat("", "").ok());
}

// Rebalance: a new node gets its share of the shards, and a dead node's
// replicas go to the live ones; at every step each document is on the nodes
// its shard is placed on, once each, and a node that comes back after its
// shards moved drops its copy.
TEST_F(ClusterNodeTest, RebalanceMovesShardsToANewNodeAndOffADeadOne) {
  constexpr uint32_t kShards = 8;
  for (int i = 0; i < 2; ++i) ASSERT_TRUE(AddNode().node->Start().ok());
  // A name whose placement gives the third node a share (rendezvous hashing
  // may give a node none of 8 shards: (2/3)^8 = 4% of names).
  std::string name;
  for (int i = 0; name.empty(); ++i) {
    const std::string candidate = absl::StrCat("papers", i);
    const auto placement = PlaceShards(candidate, kShards, 1, {"n0", "n1", "n2"});
    ASSERT_TRUE(placement.ok());
    for (const auto& shard : *placement) {
      if (shard[0] == "n2") name = candidate;
    }
  }
  db::CollectionSpec spec;
  spec.name = name;
  ASSERT_TRUE(nodes_[0]->node->CreateCollection(spec, kShards, 1, 1).ok());
  const std::vector<engine::DocumentInput> docs = Docs(80);
  ASSERT_TRUE(nodes_[1]->node->Upsert(name, docs, absl::Now() + kWait).ok());
  // Every live node's copies: exactly the placed shards, each document once.
  auto check = [&](const std::vector<Node*>& live) {
    auto entry = nodes_[0]->map->Get(name);
    ASSERT_TRUE(entry.ok()) << entry.status();
    std::vector<std::string> ids;
    for (Node* n : live) ids.push_back(n->id);
    EXPECT_EQ(entry->placement, *PlaceShards(name, kShards, 1, ids));
    std::map<std::string, int> copies;
    for (Node* n : live) {
      ASSERT_TRUE(n->node->Reconcile().ok()) << n->id;
      for (uint32_t s = 0; s < kShards; ++s) {
        const bool placed = entry->placement[s][0] == n->id;
        ShardReplica* r = n->node->Replica(name, s);
        EXPECT_EQ(r != nullptr, placed) << n->id << " shard " << s;
        if (r != nullptr) {
          ASSERT_TRUE(r->CatchUp(kWait).ok());
        }
      }
      for (const auto& [id, text] : testing::Contents(*n->db, name)) {
        ++copies[id];
        EXPECT_EQ(entry->placement[ShardOf(id, kShards)][0], n->id) << id;
      }
    }
    EXPECT_EQ(copies.size(), 80u);
    for (const auto& [id, n] : copies) EXPECT_EQ(n, 1) << id;
  };
  check({nodes_[0].get(), nodes_[1].get()});
  // A third node: rebalance gives it its share.
  Node& c = AddNode();
  ASSERT_TRUE(c.node->Start().ok());
  auto moves = nodes_[0]->node->Rebalance(name, kWait);
  ASSERT_TRUE(moves.ok()) << moves.status();
  ASSERT_FALSE(moves->empty());
  for (const ShardMove& m : *moves) EXPECT_EQ(m.added, std::vector<std::string>{"n2"});
  check({nodes_[0].get(), nodes_[1].get(), &c});
  auto again = nodes_[0]->node->Rebalance(name, kWait);
  ASSERT_TRUE(again.ok());
  EXPECT_TRUE(again->empty());  // already placed so
  // n1 dies: once its heartbeats expire, rebalance moves its shards away.
  nodes_[1]->node.reset();
  const absl::Time until = absl::Now() + kWait;
  while (absl::Now() < until) {
    auto live = nodes_[0]->map->LiveNodes();
    ASSERT_TRUE(live.ok());
    if (std::count(live->begin(), live->end(), "n1") == 0) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
  }
  moves = nodes_[2]->node->Rebalance(name, kWait);
  ASSERT_TRUE(moves.ok()) << moves.status();
  ASSERT_FALSE(moves->empty());
  for (const ShardMove& m : *moves) EXPECT_EQ(m.removed, std::vector<std::string>{"n1"});
  check({nodes_[0].get(), &c});
  // n1 comes back on its data: its shards are placed elsewhere, so it drops its copy.
  EXPECT_FALSE(testing::Contents(*nodes_[1]->db, name).empty());
  ClusterNodeOptions co;
  co.node_id = "n1";
  nodes_[1]->node = std::make_unique<ClusterNode>(nodes_[1]->db.get(), nodes_[1]->nats.get(),
                                                  nodes_[1]->map.get(), co);
  ASSERT_TRUE(nodes_[1]->node->Start().ok());
  EXPECT_TRUE(testing::Contents(*nodes_[1]->db, name).empty());
}

}  // namespace
}  // namespace neodb::cluster
