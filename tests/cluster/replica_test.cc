// Shards and replicas against a real nats-server (started by the test on a
// port the OS picks): writes taken by one node reach every replica through
// the shard streams and the engine; replicas resume from the position their
// store kept; a new replica rebuilds from the compacted stream; retries do
// not store twice; a hostile message stops a replica without moving it; a
// killed and restarted nats-server loses no acknowledged write.
#include <unistd.h>

#include <filesystem>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "cluster/nats_client.h"
#include "cluster/shard_log.h"
#include "cluster/shard_map.h"
#include "cluster/shard_replica.h"
#include "cluster/shard_writer.h"
#include "engine/database.h"
#include "engine/fake_embedder.h"
#include "gtest/gtest.h"
#include "tests/cluster/cluster_test_util.h"
#include "tests/cluster/nats_server_process.h"

namespace neodb::cluster {
namespace {

namespace fs = std::filesystem;
using engine::Database;
using engine::DocumentInput;

constexpr int kDim = 16;
constexpr uint32_t kShards = 3;
const absl::Duration kWait = absl::Seconds(30);  // a bound for a hung test, never a pace
const char kCollection[] = "papers";

// One neodb node: its own data directory and database (same fake model on
// every node, as a cluster's nodes share the collection's model).
struct Node {
  std::string dir;
  std::unique_ptr<Database> db;
  std::vector<std::unique_ptr<ShardReplica>> replicas;  // one per shard

  absl::Status Open() {
    engine::DatabaseOptions o = testing::NodeOptions(dir);
    auto d = Database::Open(o, std::make_unique<engine::FakeEmbedder>(kDim, 64, 1));
    if (!d.ok()) return d.status();
    db = std::move(*d);
    if (!db->DescribeCollection(kCollection).ok()) {
      db::CollectionSpec spec;
      spec.name = kCollection;
      if (auto c = db->CreateCollection(spec); !c.ok()) return c.status();
    }
    return absl::OkStatus();
  }
  void Close() {
    replicas.clear();
    db.reset();
  }
};

// id -> text, as a node's store holds the collection.
std::map<std::string, std::string> Contents(Database& db) {
  return testing::Contents(db, kCollection);
}

class ReplicaTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    root_ = fs::temp_directory_path() / absl::StrCat("neodb_cluster_", info->name(), "_", getpid());
    fs::remove_all(root_);
    fs::create_directories(root_);
    auto server = testing::NatsServerProcess::Start((root_ / "nats").string());
    ASSERT_TRUE(server.ok()) << server.status();
    server_ = std::move(*server);
    NatsClientOptions o;
    o.servers = {server_->url()};
    auto c = NatsClient::Connect(o);
    ASSERT_TRUE(c.ok()) << c.status();
    nats_ = std::move(*c);
    for (uint32_t s = 0; s < kShards; ++s) {
      ASSERT_TRUE(EnsureShardStream(*nats_, kCollection, s, {}).ok());
    }
  }
  void TearDown() override {
    for (auto& n : nodes_) n->Close();
    nats_.reset();
    server_.reset();
    fs::remove_all(root_);
  }

  Node& AddNode() {
    auto n = std::make_unique<Node>();
    n->dir = (root_ / absl::StrCat("node", nodes_.size())).string();
    EXPECT_TRUE(n->Open().ok());
    nodes_.push_back(std::move(n));
    return *nodes_.back();
  }
  void AttachReplicas(Node& n) {
    for (uint32_t s = 0; s < kShards; ++s) {
      n.replicas.push_back(std::make_unique<ShardReplica>(n.db.get(), nats_.get(), kCollection,
                                                          kCollection, s, kShards));
    }
  }
  static void CatchUp(Node& n) {
    for (auto& r : n.replicas) {
      absl::Status st = r->CatchUp(kWait);
      ASSERT_TRUE(st.ok()) << st;
    }
  }
  static std::vector<DocumentInput> Docs(int from, int to, const std::string& word) {
    std::vector<DocumentInput> docs;
    for (int i = from; i < to; ++i) {
      DocumentInput d;
      d.id = absl::StrCat("doc", i);
      d.text = absl::StrCat(word, " number ", i);
      docs.push_back(std::move(d));
    }
    return docs;
  }

  fs::path root_;
  std::unique_ptr<testing::NatsServerProcess> server_;
  std::unique_ptr<NatsClient> nats_;
  std::vector<std::unique_ptr<Node>> nodes_;
};

TEST_F(ReplicaTest, WritesReachEveryReplicaAndMatchOneNode) {
  Node& a = AddNode();
  Node& b = AddNode();
  Node& single = AddNode();  // the reference: the same writes on one node, unsharded
  AttachReplicas(a);
  AttachReplicas(b);
  ShardWriter writer(a.db.get(), nats_.get(), "a");
  const ShardedCollection entry = testing::EntryOf(*a.db, kCollection, kShards);

  auto w = writer.Upsert(entry, Docs(0, 60, "apple"), absl::InfiniteFuture());
  ASSERT_TRUE(w.ok()) << w.status();
  ASSERT_TRUE(single.db->Upsert(kCollection, Docs(0, 60, "apple"), absl::InfiniteFuture()).ok());
  // Overwrites and deletes, some of never-written ids.
  ASSERT_TRUE(writer.Upsert(entry, Docs(10, 20, "river"), absl::InfiniteFuture()).ok());
  ASSERT_TRUE(single.db->Upsert(kCollection, Docs(10, 20, "river"), absl::InfiniteFuture()).ok());
  const std::vector<std::string> gone = {"doc3", "doc15", "doc40", "never-written"};
  auto d = writer.Delete(entry, gone, absl::InfiniteFuture());
  ASSERT_TRUE(d.ok()) << d.status();
  ASSERT_TRUE(single.db->Delete(kCollection, gone).ok());
  EXPECT_EQ(w->token.size(), kShards);  // 60 ids touch every shard

  CatchUp(a);
  CatchUp(b);
  const auto expected = Contents(*single.db);
  ASSERT_EQ(expected.size(), 57u);
  EXPECT_EQ(Contents(*a.db), expected);
  EXPECT_EQ(Contents(*b.db), expected);
  // Replicas store the vectors the writer made: they never embed. Every
  // node answers the same query alike (vector mode: same vectors, same ranks).
  engine::SearchParams p;
  p.k = 10;
  p.mode = engine::SearchMode::kVector;
  auto ra = a.db->NearText(kCollection, "river number 12", std::nullopt, p, absl::InfiniteFuture());
  auto rb = b.db->NearText(kCollection, "river number 12", std::nullopt, p, absl::InfiniteFuture());
  auto rs = single.db->NearText(kCollection, "river number 12", std::nullopt, p,
                                absl::InfiniteFuture());
  ASSERT_TRUE(ra.ok() && rb.ok() && rs.ok());
  ASSERT_EQ(ra->hits.size(), 10u);
  for (size_t i = 0; i < ra->hits.size(); ++i) {
    EXPECT_EQ(ra->hits[i].id, rs->hits[i].id);
    EXPECT_EQ(rb->hits[i].id, rs->hits[i].id);
    EXPECT_EQ(ra->hits[i].score, rs->hits[i].score);
  }
  for (uint32_t s = 0; s < kShards; ++s) {
    EXPECT_TRUE(a.replicas[s]->status().ok());
    auto last = ShardLastSequence(*nats_, kCollection, s);
    ASSERT_TRUE(last.ok());
    EXPECT_EQ(a.replicas[s]->position(), *last);
  }
}

TEST_F(ReplicaTest, ARestartedReplicaResumesFromItsStoredPosition) {
  Node& a = AddNode();
  Node& b = AddNode();
  AttachReplicas(b);
  ShardWriter writer(a.db.get(), nats_.get(), "a");
  const ShardedCollection entry = testing::EntryOf(*a.db, kCollection, kShards);
  ASSERT_TRUE(writer.Upsert(entry, Docs(0, 30, "apple"), absl::InfiniteFuture()).ok());
  CatchUp(b);
  std::vector<uint64_t> positions;
  for (auto& r : b.replicas) positions.push_back(r->position());

  b.Close();  // as after a crash: what the store kept is the position
  ASSERT_TRUE(writer.Upsert(entry, Docs(30, 40, "stone"), absl::InfiniteFuture()).ok());
  ASSERT_TRUE(b.Open().ok());
  AttachReplicas(b);
  size_t applied = 0;
  for (uint32_t s = 0; s < kShards; ++s) {
    // Before any poll: not yet loaded. The first poll loads the stored position.
    auto n = b.replicas[s]->Poll(absl::Milliseconds(200));
    ASSERT_TRUE(n.ok()) << n.status();
    applied += *n;
    ASSERT_TRUE(b.replicas[s]->CatchUp(kWait).ok());
    EXPECT_GT(b.replicas[s]->position(), positions[s] - 1);
  }
  // Only the ten new documents were applied again (at most a batch's worth
  // per poll: the second CatchUp adds whatever the first poll did not).
  EXPECT_LE(applied, 10u);
  auto stored = b.db->SourcePositionOf(kCollection, ShardStreamName(kCollection, 0));
  ASSERT_TRUE(stored.ok());
  EXPECT_EQ(*stored, b.replicas[0]->position());
  EXPECT_EQ(Contents(*b.db).size(), 40u);
}

TEST_F(ReplicaTest, ANewReplicaRebuildsFromTheCompactedStream) {
  Node& a = AddNode();
  ShardWriter writer(a.db.get(), nats_.get(), "a");
  const ShardedCollection entry = testing::EntryOf(*a.db, kCollection, kShards);
  // Every document written five times, a third of them then deleted.
  for (int round = 0; round < 5; ++round) {
    ASSERT_TRUE(writer.Upsert(entry, Docs(0, 30, absl::StrCat("round", round)),
                              absl::InfiniteFuture()).ok());
  }
  std::vector<std::string> gone;
  for (int i = 0; i < 30; i += 3) gone.push_back(absl::StrCat("doc", i));
  ASSERT_TRUE(writer.Delete(entry, gone, absl::InfiniteFuture()).ok());
  // The log is as large as the collection's ids, not its history: 30
  // messages (20 documents, 10 tombstones) for 160 changes.
  uint64_t messages = 0;
  for (uint32_t s = 0; s < kShards; ++s) {
    auto n = ShardMessageCount(*nats_, kCollection, s);
    ASSERT_TRUE(n.ok());
    messages += *n;
  }
  EXPECT_EQ(messages, 30u);

  Node& fresh = AddNode();
  AttachReplicas(fresh);
  CatchUp(fresh);
  const auto got = Contents(*fresh.db);
  ASSERT_EQ(got.size(), 20u);
  for (const auto& [id, text] : got) {
    EXPECT_EQ(text.rfind("round4 ", 0), 0u) << id << ": " << text;
  }
  for (const std::string& id : gone) EXPECT_EQ(got.count(id), 0u) << id;
}

TEST_F(ReplicaTest, ARetriedPublishIsStoredOnce) {
  ShardChange c;
  c.op = ShardChange::Op::kDelete;
  c.id = "doc1";
  const uint32_t shard = ShardOf("doc1", kShards);
  auto first = PublishShardChange(*nats_, kCollection, shard, c, "writer-1");
  auto again = PublishShardChange(*nats_, kCollection, shard, c, "writer-1");
  ASSERT_TRUE(first.ok() && again.ok());
  EXPECT_EQ(*first, *again);
  auto other = PublishShardChange(*nats_, kCollection, shard, c, "writer-2");
  ASSERT_TRUE(other.ok());
  EXPECT_GT(*other, *first);
}

TEST_F(ReplicaTest, AHostileMessageStopsTheReplicaWithoutMovingIt) {
  Node& a = AddNode();
  AttachReplicas(a);
  ShardWriter writer(a.db.get(), nats_.get(), "a");
  const ShardedCollection entry = testing::EntryOf(*a.db, kCollection, 1);
  ASSERT_TRUE(writer.Upsert(entry, Docs(0, 5, "apple"), absl::InfiniteFuture()).ok());
  ASSERT_TRUE(a.replicas[0]->CatchUp(kWait).ok());
  const uint64_t before = a.replicas[0]->position();
  // Garbage on a document's subject, as a broken or hostile node might send.
  const std::string subject = DocumentSubject(kCollection, 0, "doc1");
  ASSERT_EQ(natsConnection_PublishString(nats_->connection(), subject.c_str(), "\x01Ugarbage"),
            NATS_OK);
  ASSERT_EQ(natsConnection_Flush(nats_->connection()), NATS_OK);
  absl::StatusOr<uint64_t> last = ShardLastSequence(*nats_, kCollection, 0);
  ASSERT_TRUE(last.ok());
  ASSERT_GT(*last, before);
  absl::Status st = a.replicas[0]->WaitFor(*last, absl::Seconds(2));
  EXPECT_FALSE(st.ok());
  EXPECT_EQ(a.replicas[0]->status().code(), absl::StatusCode::kDataLoss);
  EXPECT_NE(a.replicas[0]->status().message().find("bad document"), std::string::npos)
      << a.replicas[0]->status();
  EXPECT_EQ(a.replicas[0]->position(), before);
  // The database is untouched and answers.
  EXPECT_EQ(Contents(*a.db).size(), 5u);
  // A fresh write replaces the garbage (one message per subject): the
  // replica moves past it.
  ASSERT_TRUE(writer.Upsert(entry, Docs(1, 2, "fixed"), absl::InfiniteFuture()).ok());
  ASSERT_TRUE(a.replicas[0]->CatchUp(kWait).ok()) << a.replicas[0]->status();
  // A valid change filed under another document's subject is refused too:
  // compaction would let it replace that document's last change.
  ShardChange c;
  c.op = ShardChange::Op::kDelete;
  c.id = "doc2";
  const std::string wrong = EncodeShardChange(c);
  ASSERT_EQ(natsConnection_Publish(nats_->connection(),
                                   DocumentSubject(kCollection, 0, "doc4").c_str(), wrong.data(),
                                   static_cast<int>(wrong.size())),
            NATS_OK);
  ASSERT_EQ(natsConnection_Flush(nats_->connection()), NATS_OK);
  const uint64_t at = a.replicas[0]->position();
  last = ShardLastSequence(*nats_, kCollection, 0);
  ASSERT_TRUE(last.ok());
  EXPECT_FALSE(a.replicas[0]->WaitFor(*last, absl::Seconds(2)).ok());
  EXPECT_EQ(a.replicas[0]->status().code(), absl::StatusCode::kDataLoss);
  EXPECT_NE(a.replicas[0]->status().message().find("of another subject"), std::string::npos)
      << a.replicas[0]->status();
  EXPECT_EQ(a.replicas[0]->position(), at);
  ASSERT_TRUE(writer.Upsert(entry, Docs(4, 5, "fixed"), absl::InfiniteFuture()).ok());
  ASSERT_TRUE(a.replicas[0]->CatchUp(kWait).ok()) << a.replicas[0]->status();
  const auto got = Contents(*a.db);
  EXPECT_EQ(got.at("doc1"), "fixed number 1");
  EXPECT_EQ(got.at("doc4"), "fixed number 4");
  EXPECT_EQ(got.at("doc2"), "apple number 2");
}

// A log that lost changes its consumer had delivered and gave their
// sequences to new ones (nats-server 2.9 after a kill: README) is simulated by
// deleting the streams and writing others: a replica finds its stream behind
// its position, or another change at its position, resynchronises from the
// stream's first message, and ends with what the stream holds.
TEST_F(ReplicaTest, AReplicaAheadOfItsStreamResynchronises) {
  Node& a = AddNode();
  AttachReplicas(a);
  ShardWriter writer(a.db.get(), nats_.get(), "a");
  const ShardedCollection entry = testing::EntryOf(*a.db, kCollection, kShards);
  auto recreate = [&] {
    for (uint32_t s = 0; s < kShards; ++s) {
      ASSERT_TRUE(DeleteShardStream(*nats_, kCollection, s).ok());
      ASSERT_TRUE(EnsureShardStream(*nats_, kCollection, s, {}).ok());
    }
  };
  auto expect_only = [&](int from, int to, const std::string& word) {
    std::map<std::string, std::string> want;
    for (const DocumentInput& d : Docs(from, to, word)) want[d.id] = d.text;
    EXPECT_EQ(Contents(*a.db), want);
  };
  ASSERT_TRUE(writer.Upsert(entry, Docs(0, 30, "apple"), absl::InfiniteFuture()).ok());
  CatchUp(a);
  expect_only(0, 30, "apple");
  // Behind: each stream now ends below the position its replica applied.
  recreate();
  ASSERT_TRUE(writer.Upsert(entry, Docs(100, 103, "pear"), absl::InfiniteFuture()).ok());
  CatchUp(a);
  expect_only(100, 103, "pear");
  uint64_t resyncs = 0;
  for (auto& r : a.replicas) resyncs += r->resyncs();
  EXPECT_EQ(resyncs, kShards);
  // Past it again with other changes: the message at a replica's position
  // is not the one it applied.
  recreate();
  ASSERT_TRUE(writer.Upsert(entry, Docs(200, 260, "plum"), absl::InfiniteFuture()).ok());
  CatchUp(a);
  expect_only(200, 260, "plum");
  resyncs = 0;
  for (auto& r : a.replicas) resyncs += r->resyncs();
  EXPECT_GT(resyncs, kShards);  // every replica that held a change found the new one
  auto v = a.db->Verify(kCollection);
  ASSERT_TRUE(v.ok()) << v.status();
  EXPECT_EQ(v->missing_from_index, 0u);
  EXPECT_EQ(v->stale_in_index, 0u);
}

TEST_F(ReplicaTest, ReadYourWritesWithTheToken) {
  Node& a = AddNode();
  Node& b = AddNode();
  AttachReplicas(b);
  for (auto& r : b.replicas) r->Start();  // background appliers
  ShardWriter writer(a.db.get(), nats_.get(), "a");
  const ShardedCollection entry = testing::EntryOf(*a.db, kCollection, kShards);
  for (int i = 0; i < 5; ++i) {
    auto w = writer.Upsert(entry, Docs(i * 10, i * 10 + 10, "apple"),
                           absl::InfiniteFuture());
    ASSERT_TRUE(w.ok()) << w.status();
    auto token = ParseToken(FormatToken(w->token));  // as it travels to a reader
    ASSERT_TRUE(token.ok());
    for (const auto& [shard, seq] : *token) {
      ASSERT_TRUE(b.replicas[shard]->WaitFor(seq, kWait).ok());
    }
    auto got = b.db->Get(kCollection, w->ids);
    ASSERT_TRUE(got.ok());
    for (const auto& d : *got) EXPECT_TRUE(d.has_value());
  }
}

TEST_F(ReplicaTest, AKilledNatsServerLosesNoAcknowledgedWrite) {
  Node& a = AddNode();
  Node& b = AddNode();
  AttachReplicas(b);
  for (auto& r : b.replicas) r->Start();
  ShardWriter writer(a.db.get(), nats_.get(), "a");
  const ShardedCollection entry = testing::EntryOf(*a.db, kCollection, kShards);
  std::vector<std::string> acknowledged;
  for (int round = 0; round < 4; ++round) {
    auto w = writer.Upsert(entry, Docs(round * 10, round * 10 + 10, "apple"),
                           absl::Now() + kWait);
    ASSERT_TRUE(w.ok()) << w.status();
    acknowledged.insert(acknowledged.end(), w->ids.begin(), w->ids.end());
    // kill -9: what JetStream acknowledged is in its files (the OS keeps
    // them past a process kill; a machine loss is what R=3 is for).
    server_->Kill();
    // While it is down, a write fails within its deadline, with UNAVAILABLE.
    auto down = writer.Upsert(entry, Docs(900, 901, "lost"),
                              absl::Now() + absl::Milliseconds(300));
    EXPECT_FALSE(down.ok());
    EXPECT_EQ(down.status().code(), absl::StatusCode::kUnavailable) << down.status();
    ASSERT_TRUE(server_->Restart().ok());
  }
  // The clients reconnect by themselves; the replicas resume.
  for (auto& r : b.replicas) ASSERT_TRUE(r->CatchUp(kWait).ok()) << r->status();
  const auto got = Contents(*b.db);
  for (const std::string& id : acknowledged) EXPECT_EQ(got.count(id), 1u) << id;
}

}  // namespace
}  // namespace neodb::cluster
