// A sharded collection's operations against a real nats-server: reindex,
// drop, backup and restore.
//
// Reindex (cluster/cluster_reindex.cc): three nodes, a collection of 4 shards × 2 replicas, re-embedded onto
// another model while a client keeps writing and deleting through another
// node and one node is down. Afterwards every node (the one that was down
// too, once back) holds the collection on the new model, every replica holds
// exactly what the acknowledged writes say, every vector is the new model's
// (a document's own text finds it at cosine 1), and the old log is gone. A
// bad model and a second reindex to another model are refused with nothing
// changed. Fake models: directory "N" loads FakeEmbedder seed N.
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "cluster/cluster_map.h"
#include "cluster/cluster_node.h"
#include "cluster/shard_log.h"
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
constexpr uint32_t kShards = 4;
const absl::Duration kWait = absl::Seconds(60);  // a bound for a hung test, never a pace
const char kName[] = "papers";

std::vector<engine::DocumentInput> Docs(const std::string& prefix, int from, int to,
                                        const std::string& word) {
  std::vector<engine::DocumentInput> docs;
  for (int i = from; i < to; ++i) {
    engine::DocumentInput d;
    d.id = absl::StrCat(prefix, i);
    d.text = absl::StrCat(word, " ", prefix, " number ", i);
    d.metadata["i"] = static_cast<int64_t>(i);
    docs.push_back(std::move(d));
  }
  return docs;
}

using Node = testing::InProcessNode;

class ClusterOperationsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = testing::FreshTestRoot("neodb_cluster_ops");
    auto server = testing::NatsServerProcess::Start((root_ / "nats").string());
    ASSERT_TRUE(server.ok()) << server.status();
    server_ = std::move(*server);
    for (int i = 0; i < 3; ++i) {
      nodes_.push_back(std::make_unique<Node>());
      nodes_.back()->id = absl::StrCat("n", i);
      ASSERT_TRUE(Open(*nodes_.back()).ok());
    }
  }
  void TearDown() override {
    for (auto& n : nodes_) Close(*n);
    server_.reset();
    fs::remove_all(root_);
  }

  // Opens (or reopens) a node on its data directory, default model "1".
  absl::Status Open(Node& n) {
    engine::DatabaseOptions o = testing::NodeOptions((root_ / n.id).string());
    o.default_model_dir = "1";
    o.embedder_factory = [](const std::string& d, encoder::Precision)
        -> absl::StatusOr<std::unique_ptr<engine::Embedder>> {
      if (d != "1" && d != "2") return absl::NotFoundError(absl::StrCat("no model in ", d));
      return std::unique_ptr<engine::Embedder>(
          std::make_unique<engine::FakeEmbedder>(kDim, 64, std::stoull(d)));
    };
    auto db = Database::Open(o, std::make_unique<engine::FakeEmbedder>(kDim, 64, 1));
    if (!db.ok()) return db.status();
    n.db = std::move(*db);
    NatsClientOptions no;
    no.servers = {server_->url()};
    auto nc = NatsClient::Connect(no);
    if (!nc.ok()) return nc.status();
    n.nats = std::move(*nc);
    auto map = ClusterMap::Open(*n.nats, {});
    if (!map.ok()) return map.status();
    n.map = std::move(*map);
    ClusterNodeOptions co;
    co.node_id = n.id;
    n.node = std::make_unique<ClusterNode>(n.db.get(), n.nats.get(), n.map.get(), co);
    return n.node->Start();
  }
  void Close(Node& n) {
    n.node.reset();
    n.map.reset();
    n.nats.reset();
    n.db.reset();
  }

  fs::path root_;
  std::unique_ptr<testing::NatsServerProcess> server_;
  std::vector<std::unique_ptr<Node>> nodes_;
};

TEST_F(ClusterOperationsTest, EveryReplicaMovesToTheNewModelWhileWritesGoOn) {
  db::CollectionSpec spec;
  spec.name = kName;
  auto created = nodes_[0]->node->CreateCollection(spec, kShards, 2, /*log_replicas=*/1);
  ASSERT_TRUE(created.ok()) << created.status();
  const std::string old_model = created->model_id;
  // What the acknowledged writes say: id -> text ("" once deleted).
  std::map<std::string, std::string> expected;
  // Ids whose last write failed: stored or not (an UNAVAILABLE's change may
  // have been stored; the client would retry).
  std::set<std::string> uncertain;
  std::mutex expected_mu;
  auto w = nodes_[0]->node->Upsert(kName, Docs("doc", 0, 300, "apple"), absl::Now() + kWait);
  ASSERT_TRUE(w.ok()) << w.status();
  for (const auto& d : Docs("doc", 0, 300, "apple")) expected[d.id] = d.text;

  // Node 2 goes down before the reindex and comes back after it.
  Close(*nodes_[2]);

  // A client writes through node 0 all along: new documents, overwrites
  // and deletes, retrying what the switch refuses (UNAVAILABLE, ABORTED).
  std::atomic<bool> stop{false};
  std::atomic<int> acked{0}, refused{0};
  std::thread writer([&] {
    for (int i = 0; !stop.load(); ++i) {
      absl::Status st;
      std::string id;
      if (i % 5 == 4) {
        id = absl::StrCat("doc", i % 300);
        st = nodes_[0]->node->Delete(kName, {id}, absl::Now() + kWait).status();
        if (st.ok()) {
          std::lock_guard<std::mutex> lock(expected_mu);
          expected[id] = "";
        }
      } else {
        auto docs = Docs(i % 2 == 0 ? "live" : "doc", i, i + 1, "pear");
        id = docs[0].id;
        const std::string text = docs[0].text;
        st = nodes_[0]->node->Upsert(kName, std::move(docs), absl::Now() + kWait).status();
        if (st.ok()) {
          std::lock_guard<std::mutex> lock(expected_mu);
          expected[id] = text;
        }
      }
      {
        std::lock_guard<std::mutex> lock(expected_mu);
        if (st.ok()) {
          uncertain.erase(id);
        } else if (!absl::IsAborted(st)) {  // ABORTED: refused by the sealed log, nothing stored
          uncertain.insert(id);
        }
      }
      if (st.ok()) {
        ++acked;
      } else {
        EXPECT_TRUE(absl::IsUnavailable(st) || absl::IsAborted(st)) << st;
        if (!absl::IsUnavailable(st) && !absl::IsAborted(st)) break;
        ++refused;
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
      }
    }
  });
  struct JoinOnExit {  // an assertion that returns early stops the writer first
    std::atomic<bool>& stop;
    std::thread& t;
    ~JoinOnExit() {
      stop = true;
      if (t.joinable()) t.join();
    }
  } join_on_exit{stop, writer};
  while (acked.load() < 20) std::this_thread::sleep_for(std::chrono::milliseconds(5));

  uint64_t last_done = 0, last_total = 0;
  absl::Status r = nodes_[1]->node->Reindex(kName, "2", [&](uint64_t done, uint64_t total) {
    last_done = done;
    last_total = total;
  });
  ASSERT_TRUE(r.ok()) << r;
  EXPECT_EQ(last_done, last_total);
  EXPECT_GE(last_total, 300u);
  // Writes go on after the switch (through node 0, which switches at its
  // next reconcile).
  const int at_switch = acked.load();
  const absl::Time until = absl::Now() + kWait;
  while (acked.load() < at_switch + 20 && absl::Now() < until) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  stop = true;
  writer.join();
  EXPECT_GE(acked.load(), at_switch + 20) << "writes did not resume after the switch";
  std::printf("writes acknowledged %d, refused (retried) %d\n", acked.load(), refused.load());

  // Node 2 comes back: its copy, of the old model, is rebuilt from the new log.
  ASSERT_TRUE(Open(*nodes_[2]).ok());

  auto entry = nodes_[0]->map->Get(kName);
  ASSERT_TRUE(entry.ok()) << entry.status();
  EXPECT_EQ(entry->generation, 1u);
  EXPECT_TRUE(entry->reindex_to.empty());
  EXPECT_NE(entry->model_id, old_model);
  EXPECT_EQ(entry->spec.model_dir, "2");
  // Every replica caught up with the new log.
  std::map<std::string, int> copies;
  for (auto& n : nodes_) {
    ASSERT_TRUE(n->node->Reconcile().ok()) << n->id;
    auto info = n->db->DescribeCollection(kName);
    ASSERT_TRUE(info.ok()) << info.status();
    EXPECT_EQ(info->spec.model_id, entry->model_id) << n->id;
    for (uint32_t s = 0; s < kShards; ++s) {
      if (ShardReplica* rep = n->node->Replica(kName, s)) {
        EXPECT_EQ(rep->log(), LogName(kName, 1));
        ASSERT_TRUE(rep->CatchUp(kWait).ok()) << n->id << " shard " << s;
      }
    }
    const auto contents = testing::Contents(*n->db, kName);
    for (const auto& [id, text] : contents) {
      ++copies[id];
      const uint32_t s = ShardOf(id, kShards);
      const auto& placed = entry->placement[s];
      EXPECT_NE(std::find(placed.begin(), placed.end(), n->id), placed.end())
          << id << " on " << n->id;
      if (uncertain.count(id)) continue;
      ASSERT_TRUE(expected.count(id)) << id << " was never written";
      EXPECT_EQ(text, expected[id]) << id << " on " << n->id;
    }
    // The vectors are the new model's: a document's own text finds it at
    // cosine 1 (a query of one model meets another's vectors far lower).
    engine::SearchParams p;
    p.k = 1;
    int checked = 0;
    for (const auto& [id, text] : contents) {
      if (++checked > 20) break;
      auto hits = n->db->NearText(kName, text, std::nullopt, p, absl::Now() + kWait);
      ASSERT_TRUE(hits.ok()) << hits.status();
      ASSERT_EQ(hits->hits.size(), 1u);
      EXPECT_EQ(hits->hits[0].id, id);
      EXPECT_GT(hits->hits[0].score, 0.999f) << id << " on " << n->id;
      EXPECT_EQ(hits->model_id, entry->model_id);
    }
    auto docs = n->db->Get(kName, {contents.begin()->first});
    ASSERT_TRUE(docs.ok());
    ASSERT_TRUE((*docs)[0].has_value());
    EXPECT_EQ((*docs)[0]->model_id, entry->model_id);
  }
  // Each acknowledged live document on its two replicas, no deleted one anywhere.
  for (const auto& [id, text] : expected) {
    if (uncertain.count(id)) continue;
    EXPECT_EQ(copies[id], text.empty() ? 0 : 2) << id;
  }
  for (const std::string& id : uncertain) {  // there or not, but alike on its replicas
    EXPECT_TRUE(copies[id] == 0 || copies[id] == 2) << id << ": " << copies[id] << " copies";
  }
  std::printf("writes whose outcome the test left open: %zu\n", uncertain.size());
  // The old log is gone (deleted once no live node read it).
  for (uint32_t s = 0; s < kShards; ++s) {
    EXPECT_TRUE(absl::IsNotFound(ShardLastSequence(*nodes_[0]->nats, kName, s).status()))
        << "shard " << s;
  }
}

TEST_F(ClusterOperationsTest, ABadModelAndASecondReindexAreRefusedWithNothingChanged) {
  db::CollectionSpec spec;
  spec.name = kName;
  ASSERT_TRUE(nodes_[0]->node->CreateCollection(spec, kShards, 2, 1).ok());
  ASSERT_TRUE(nodes_[0]->node->Upsert(kName, Docs("doc", 0, 20, "apple"), absl::Now() + kWait).ok());
  absl::Status bad = nodes_[1]->node->StartReindex(kName, "none");
  EXPECT_EQ(bad.code(), absl::StatusCode::kFailedPrecondition) << bad;
  EXPECT_NE(bad.message().find("none"), std::string::npos) << bad;
  auto entry = nodes_[0]->map->GetVersioned(kName);
  ASSERT_TRUE(entry.ok());
  EXPECT_EQ(entry->collection.generation, 0u);
  EXPECT_TRUE(entry->collection.reindex_to.empty());
  // A reindex to another model is in the map (a node that crashed in one):
  // another target is refused, the status shows it running.
  ShardedCollection marked = entry->collection;
  marked.reindex_to = "some-other-model";
  ASSERT_TRUE(nodes_[0]->map->Update(marked, entry->revision).ok());
  absl::Status second = nodes_[1]->node->Reindex(kName, "2", {});
  EXPECT_EQ(second.code(), absl::StatusCode::kFailedPrecondition) << second;
  auto p = nodes_[2]->node->ReindexProgressOf(kName);
  ASSERT_TRUE(p.ok());
  EXPECT_EQ(p->state, engine::ReindexProgress::State::kRunning);
  EXPECT_EQ(p->model_id, "some-other-model");
  // Writes still go to the old log, as before.
  EXPECT_TRUE(nodes_[2]->node->Upsert(kName, Docs("doc", 20, 25, "pear"), absl::Now() + kWait).ok());
}

// Drop: every node drops its copy, one that was down too once back (it
// finds the name taken by a new collection, made after the drop, and
// rebuilds its copy rather than keep the dropped one's documents).
TEST_F(ClusterOperationsTest, ADroppedCollectionGoesFromEveryNodeAndItsNameIsFreeAgain) {
  db::CollectionSpec spec;
  spec.name = kName;
  ASSERT_TRUE(nodes_[0]->node->CreateCollection(spec, kShards, 2, 1).ok());
  ASSERT_TRUE(nodes_[0]->node->Upsert(kName, Docs("doc", 0, 50, "apple"), absl::Now() + kWait).ok());
  for (auto& n : nodes_) ASSERT_TRUE(n->node->Reconcile().ok());
  Close(*nodes_[2]);
  ASSERT_TRUE(nodes_[1]->node->DropCollection(kName).ok());
  EXPECT_TRUE(absl::IsNotFound(nodes_[0]->node->DropCollection(kName)));
  for (int i = 0; i < 2; ++i) {
    ASSERT_TRUE(nodes_[i]->node->Reconcile().ok());
    EXPECT_TRUE(absl::IsNotFound(nodes_[i]->db->DescribeCollection(kName).status())) << i;
    EXPECT_FALSE(nodes_[i]->node->IsSharded(kName)) << i;
    EXPECT_EQ(nodes_[i]->node->Replica(kName, 0), nullptr);
  }
  for (uint32_t s = 0; s < kShards; ++s) {
    EXPECT_TRUE(absl::IsNotFound(ShardLastSequence(*nodes_[0]->nats, kName, s).status()));
  }
  auto gone = nodes_[0]->node->Status();
  ASSERT_TRUE(gone.ok());
  EXPECT_TRUE(gone->collections.empty());

  // The name again, a new collection at the next generation.
  auto again = nodes_[1]->node->CreateCollection(spec, kShards, 2, 1);
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_EQ(again->generation, 1u);
  ASSERT_TRUE(nodes_[1]->node->Upsert(kName, Docs("pear", 0, 10, "pear"), absl::Now() + kWait).ok());
  ASSERT_TRUE(Open(*nodes_[2]).ok());  // its copy holds the dropped collection's documents
  auto entry = nodes_[0]->map->Get(kName);
  ASSERT_TRUE(entry.ok());
  for (auto& n : nodes_) {
    ASSERT_TRUE(n->node->Reconcile().ok()) << n->id;
    for (uint32_t s = 0; s < kShards; ++s) {
      if (ShardReplica* r = n->node->Replica(kName, s)) ASSERT_TRUE(r->CatchUp(kWait).ok());
    }
    auto info = n->db->DescribeCollection(kName);
    ASSERT_TRUE(info.ok()) << n->id << ": " << info.status();
    EXPECT_EQ(info->spec.created_at_micros, entry->spec.created_at_micros) << n->id;
    for (const auto& [id, text] : testing::Contents(*n->db, kName)) {
      EXPECT_EQ(id.rfind("pear", 0), 0u) << id << " of the dropped collection on " << n->id;
    }
  }
}

// Backup from the log and restore (collection_backup.h): what a restore
// makes holds the backed-up documents exactly (texts, metadata, vectors bit
// for bit, deletes kept), at another shard count too; a damaged backup and
// one of another model change nothing.
TEST_F(ClusterOperationsTest, ABackupFromTheLogRestoresTheCollectionExactly) {
  db::CollectionSpec spec;
  spec.name = kName;
  ASSERT_TRUE(nodes_[0]->node->CreateCollection(spec, kShards, 2, 1).ok());
  ASSERT_TRUE(nodes_[0]->node->Upsert(kName, Docs("doc", 0, 120, "apple"), absl::Now() + kWait).ok());
  ASSERT_TRUE(nodes_[1]->node->Upsert(kName, Docs("doc", 0, 10, "pear"), absl::Now() + kWait).ok());
  std::vector<std::string> gone;
  for (int i = 100; i < 120; ++i) gone.push_back(absl::StrCat("doc", i));
  ASSERT_TRUE(nodes_[2]->node->Delete(kName, gone, absl::Now() + kWait).ok());
  // What the collection holds: id -> document, from the nodes' copies.
  auto whole = [&](const std::string& name) {
    std::map<std::string, db::Document> out;
    for (auto& n : nodes_) {
      EXPECT_TRUE(n->node->Reconcile().ok());
      for (uint32_t s = 0; s < kShards; ++s) {
        if (ShardReplica* r = n->node->Replica(name, s)) EXPECT_TRUE(r->CatchUp(kWait).ok());
      }
      std::string token;
      while (true) {
        auto page = n->db->List(name, token, 1000);
        EXPECT_TRUE(page.ok()) << page.status();
        if (!page.ok()) break;
        for (const db::Document& d : page->documents) out[d.id] = d;
        if (page->next_page_token.empty()) break;
        token = page->next_page_token;
      }
    }
    return out;
  };
  const std::map<std::string, db::Document> before = whole(kName);
  ASSERT_EQ(before.size(), 100u);

  const std::string dir = (root_ / "backups" / "papers-1").string();
  fs::create_directories(root_ / "backups");
  auto b = nodes_[1]->node->BackupCollection(kName, dir);
  ASSERT_TRUE(b.ok()) << b.status();
  EXPECT_EQ(b->changes(), 120u);  // 100 documents, 20 tombstones
  EXPECT_EQ(b->shards.size(), kShards);
  EXPECT_TRUE(absl::IsAlreadyExists(nodes_[1]->node->BackupCollection(kName, dir).status()));
  EXPECT_TRUE(absl::IsNotFound(
      nodes_[1]->node->BackupCollection("nothing", (root_ / "backups" / "x").string()).status()));

  // Dropped, then restored under its name at another shard count.
  ASSERT_TRUE(nodes_[0]->node->DropCollection(kName).ok());
  auto r = nodes_[2]->node->RestoreCollection(dir, "", 3, 2, absl::Now() + kWait);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->collection.shards, 3u);
  EXPECT_EQ(r->changes, 120u);
  const std::map<std::string, db::Document> after = whole(kName);
  ASSERT_EQ(after.size(), before.size());
  for (const auto& [id, d] : before) {
    auto it = after.find(id);
    ASSERT_NE(it, after.end()) << id;
    EXPECT_EQ(it->second.text, d.text) << id;
    EXPECT_EQ(it->second.metadata, d.metadata) << id;
    EXPECT_EQ(it->second.vector, d.vector) << id;  // bit for bit: nothing embedded again
    EXPECT_EQ(it->second.model_id, d.model_id) << id;
  }

  // A damaged backup (one byte of a shard's file) is refused whole.
  const std::string bad = (root_ / "backups" / "damaged").string();
  fs::copy(dir, bad, fs::copy_options::recursive);
  {
    std::fstream f(bad + "/shard-1.log", std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(40);
    f.put('\x7f');
  }
  auto damaged = nodes_[0]->node->RestoreCollection(bad, "copy", 0, 0, absl::Now() + kWait);
  EXPECT_TRUE(absl::IsDataLoss(damaged.status())) << damaged.status();
  EXPECT_TRUE(absl::IsNotFound(nodes_[0]->map->Get("copy").status()));
  // A manifest that is not one.
  { std::ofstream(bad + "/manifest.json") << "{\"format\":1,\"entry\":\"!!\"}"; }
  EXPECT_TRUE(absl::IsInvalidArgument(
      nodes_[0]->node->RestoreCollection(bad, "copy", 0, 0, absl::Now() + kWait).status()));
  // The name taken: ALREADY_EXISTS, nothing published.
  EXPECT_TRUE(absl::IsAlreadyExists(
      nodes_[0]->node->RestoreCollection(dir, "", 0, 0, absl::Now() + kWait).status()));
}

}  // namespace
}  // namespace neodb::cluster
