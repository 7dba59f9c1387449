// Crash safety end to end: kill -9 the server at >= 50 moments, each cycle
// one restart, with the kill landing deterministically
//   - during ingest: with a stream open (its first batch sent, not yet
//     acknowledged), after 1..3 acknowledged streams and deletes;
//   - during a snapshot: the server pauses just before the Nth file write of
//     the snapshot (--test-snapshot-pause-at, common/env_pausing.h) and says
//     so on stdout; the test kills it on that line;
//   - during a reindex: once ReindexStatus reports it staging vectors, or
//     (every other time) once it reports the commit under way.
// After each restart: every acknowledged upsert is there with its text and
// found by a keyword search for its own text, every acknowledged delete is
// gone from Get, List and search, no id appears twice in List or in search
// results, and Admin.Verify finds the indexes equal to the store. Each cycle
// is cheap (the fake embedder, small streams), so the whole test stays in a
// CI budget. Also: a reindex killed midway resumes after the restart and
// finishes on its new model.
#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <map>
#include <mutex>
#include <random>
#include <set>
#include <thread>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "neodb/v1/neodb.grpc.pb.h"
#include "tests/integration/collection_calls.h"
#include "tests/integration/test_env.h"

namespace neodb::testing {
namespace {

std::chrono::system_clock::time_point Deadline(int seconds = 30) {
  return std::chrono::system_clock::now() + std::chrono::seconds(seconds);
}

v1::VerifyResponse Verify(ServerProcess& s, const std::string& c) { return VerifyCollection(s, c); }

v1::ReindexStatusResponse ReindexStatus(ServerProcess& s, const std::string& c) {
  auto admin = v1::Admin::NewStub(s.Channel());
  grpc::ClientContext ctx;
  ctx.set_deadline(Deadline());
  v1::ReindexStatusRequest req;
  req.set_collection(c);
  v1::ReindexStatusResponse r;
  EXPECT_TRUE(admin->ReindexStatus(&ctx, req, &r).ok());
  return r;
}

// Polls ReindexStatus until a reindex of `c` is no longer running.
v1::ReindexStatusResponse WaitForReindexEnd(ServerProcess& s, const std::string& c) {
  while (true) {
    v1::ReindexStatusResponse st = ReindexStatus(s, c);
    if (st.state() != v1::ReindexStatusResponse::RUNNING || !s.Alive()) return st;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
}

std::vector<std::string> ServeArgs(const TestDir& dir, int model,
                                   std::vector<std::string> extra = {}) {
  std::vector<std::string> a = {"--data-dir", dir.Sub("data"), "--snapshot-interval", "0.3"};
  for (auto& x : ModelArgs(dir, model)) a.push_back(x);
  for (auto& x : extra) a.push_back(x);
  return a;
}

// The fake embedder whatever the build: a cycle costs a process start and
// a few RPCs, not encoder passes. fake:1 and fake:2 are two models.
std::vector<std::string> FakeServeArgs(const TestDir& dir, std::vector<std::string> extra) {
  for (int seed : {1, 2}) std::filesystem::create_directories(dir.Sub(absl::StrCat("fake:", seed)));
  std::vector<std::string> a = {"--data-dir", dir.Sub("data"),   "--fake-model", "32",
                                "--model",    dir.Sub("fake:1"), "--models-dir", dir.Sub("")};
  for (auto& x : extra) a.push_back(x);
  return a;
}

// What the client knows of collection "c" from acknowledged operations.
// An id is in `acked` (must exist; its text is known unless it is in
// `tainted`, which an unacknowledged upsert may have changed), in `deleted`
// (must not exist), or in neither (an unacknowledged operation left it
// unknown).
struct Expected {
  std::map<std::string, std::string> acked;    // id -> text
  std::map<std::string, std::string> deleted;  // id -> its last text
  std::set<std::string> tainted;

  void Upserted(const std::map<std::string, std::string>& docs, bool ok) {
    for (const auto& [id, text] : docs) {
      if (ok) {
        acked[id] = text;
        deleted.erase(id);
        tainted.erase(id);
      } else if (acked.count(id)) {
        tainted.insert(id);
      } else {
        deleted.erase(id);
      }
    }
  }
  void Deleted(const std::vector<std::string>& ids, bool ok) {
    for (const auto& id : ids) {
      auto it = acked.find(id);
      if (ok) deleted[id] = it != acked.end() ? it->second : "";
      if (!ok) deleted.erase(id);
      if (it != acked.end()) acked.erase(it);
      tainted.erase(id);
    }
  }
};

// One operation of the writer, in the order the server applied them.
struct Op {
  bool upsert = true;
  std::map<std::string, std::string> docs;  // upsert
  std::vector<std::string> ids;             // delete
  bool ok = false;
  grpc::StatusCode code = grpc::StatusCode::UNKNOWN;
};

// Streams upserts (BulkIngest, two batches of ten, some overwrites) and
// deletes at the server until it dies. One thread, so the operations reach
// the server in the order they are recorded.
class Writer {
 public:
  Writer(ServerProcess& server, uint64_t seed, int* next_id, std::vector<std::string> known)
      : docs_(v1::Documents::NewStub(server.Channel())),
        rng_(seed),
        next_id_(next_id),
        known_(std::move(known)) {
    thread_ = std::thread([this] { Run(); });
  }
  // Stops after the operation in flight (an early test exit).
  ~Writer() {
    stop_ = true;
    Join();
  }
  void Join() {
    if (thread_.joinable()) thread_.join();
  }

  // Waits until `acks` operations were acknowledged and the next stream has
  // sent its first batch (the server holds an open stream); false if the
  // writer stopped first (the server died).
  bool WaitForOpenStreamAfter(int acks) {
    std::unique_lock<std::mutex> l(mu_);
    cv_.wait(l, [&] { return done_ || (acks_ >= acks && stream_open_); });
    return !done_;
  }
  // The operations, once the writer has stopped.
  std::vector<Op> TakeOps() {
    Join();
    return std::move(ops_);
  }

 private:
  void Run() {
    while (!stop_) {
      Op op = (rng_() % 4 == 0 && !known_.empty()) ? Delete() : Upsert();
      std::lock_guard<std::mutex> l(mu_);
      const bool ok = op.ok;
      const bool retry = op.code == grpc::StatusCode::ABORTED;
      stream_open_ = false;
      ops_.push_back(std::move(op));
      if (ok) ++acks_;
      cv_.notify_all();
      // ABORTED: a reindex committed under the write (documented: retry).
      // Anything else: the server is gone.
      if (!ok && !retry) break;
    }
    std::lock_guard<std::mutex> l(mu_);
    done_ = true;
    cv_.notify_all();
  }
  Op Delete() {
    Op op;
    op.upsert = false;
    v1::DeleteRequest req;
    req.set_collection("c");
    for (int i = 0; i < 3; ++i) {
      const std::string& id = known_[rng_() % known_.size()];
      if (std::find(op.ids.begin(), op.ids.end(), id) == op.ids.end()) op.ids.push_back(id);
    }
    for (const auto& id : op.ids) req.add_ids(id);
    grpc::ClientContext ctx;
    ctx.set_deadline(Deadline(30));
    v1::DeleteResponse resp;
    op.code = docs_->Delete(&ctx, req, &resp).error_code();
    op.ok = op.code == grpc::StatusCode::OK;
    return op;
  }
  Op Upsert() {
    Op op;
    grpc::ClientContext ctx;
    ctx.set_deadline(Deadline(30));
    v1::BulkIngestResponse resp;
    auto w = docs_->BulkIngest(&ctx, &resp);
    for (int b = 0; b < 2; ++b) {
      v1::IngestBatch batch;
      batch.set_collection("c");
      for (int i = 0; i < 10; ++i) {
        auto* d = batch.add_documents();
        const bool overwrite = rng_() % 5 == 0 && !known_.empty();
        std::string id =
            overwrite ? known_[rng_() % known_.size()] : absl::StrCat("d", (*next_id_)++);
        // The id is a word of the text: a keyword search for the text finds
        // this document first, whatever other documents share its words.
        d->set_id(id);
        d->set_text(absl::StrCat(id, " ", RandomText(rng_)));
        op.docs[id] = d->text();
        if (!overwrite) known_.push_back(id);
      }
      if (!w->Write(batch)) break;
      if (b == 0) {
        std::lock_guard<std::mutex> l(mu_);
        stream_open_ = true;
        cv_.notify_all();
      }
    }
    w->WritesDone();
    op.code = w->Finish().error_code();
    op.ok = op.code == grpc::StatusCode::OK;
    return op;
  }

  std::unique_ptr<v1::Documents::Stub> docs_;
  std::mt19937_64 rng_;
  int* next_id_;  // used by this thread only while it runs
  std::vector<std::string> known_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::vector<Op> ops_;
  int acks_ = 0;
  bool stream_open_ = false;
  bool done_ = false;
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

// Every check after a restart: Get, List, a keyword search for every
// acknowledged and every deleted document, vector searches, Verify.
void CheckAfterRestart(ServerProcess& server, Expected& e, std::mt19937_64& rng,
                       const std::string& where) {
  SCOPED_TRACE(where);
  auto docs = v1::Documents::NewStub(server.Channel());
  auto search = v1::Search::NewStub(server.Channel());
  // Get: every acknowledged document with its text; every deleted one gone.
  std::map<std::string, std::string> stored_text;
  std::vector<std::string> ids;
  for (const auto& [id, text] : e.acked) ids.push_back(id);
  for (const auto& [id, text] : e.deleted) ids.push_back(id);
  for (size_t i = 0; i < ids.size(); i += 500) {
    grpc::ClientContext ctx;
    ctx.set_deadline(Deadline());
    v1::GetRequest req;
    req.set_collection("c");
    for (size_t j = i; j < std::min(ids.size(), i + 500); ++j) req.add_ids(ids[j]);
    v1::GetResponse resp;
    ASSERT_TRUE(docs->Get(&ctx, req, &resp).ok());
    for (const auto& id : resp.missing_ids()) {
      EXPECT_FALSE(e.acked.count(id)) << "acknowledged " << id << " lost";
    }
    for (const auto& d : resp.documents()) {
      stored_text[d.id()] = d.text();
      EXPECT_FALSE(e.deleted.count(d.id())) << "deleted " << d.id() << " came back";
      auto it = e.acked.find(d.id());
      if (it != e.acked.end() && !e.tainted.count(d.id())) {
        EXPECT_EQ(d.text(), it->second) << d.id();
      }
    }
  }
  // List: each id once, the acknowledged ones in, the deleted ones out.
  std::set<std::string> listed;
  for (const v1::Document& d : ListAllDocuments(server, "c")) {
    EXPECT_TRUE(listed.insert(d.id()).second) << "List returned " << d.id() << " twice";
    EXPECT_FALSE(e.deleted.count(d.id())) << "List returned deleted " << d.id();
  }
  for (const auto& [id, text] : e.acked) EXPECT_TRUE(listed.count(id)) << "List lacks " << id;
  // Search: an acknowledged document is found by its own text, a deleted
  // one is not, and no hit list holds an id twice.
  auto keyword = [&](const std::string& text) {
    grpc::ClientContext ctx;
    ctx.set_deadline(Deadline());
    v1::NearTextRequest req;
    req.set_collection("c");
    req.set_query(text);
    req.set_k(10);
    req.set_mode("keyword");
    v1::SearchResponse resp;
    grpc::Status st = search->NearText(&ctx, req, &resp);
    EXPECT_TRUE(st.ok()) << st.error_message();
    std::set<std::string> hits;
    for (const auto& h : resp.hits()) {
      EXPECT_TRUE(hits.insert(h.id()).second) << "search returned " << h.id() << " twice";
    }
    return hits;
  };
  for (const auto& [id, acked_text] : e.acked) {
    auto text = stored_text.find(id);
    if (text == stored_text.end()) continue;  // reported lost above
    EXPECT_TRUE(keyword(text->second).count(id)) << id << " not found by its own text";
  }
  for (const auto& [id, last_text] : e.deleted) {
    if (last_text.empty()) continue;  // its text was never acknowledged
    EXPECT_FALSE(keyword(last_text).count(id)) << "search found deleted " << id;
  }
  for (int i = 0; i < 3 && !e.acked.empty(); ++i) {
    grpc::ClientContext ctx;
    ctx.set_deadline(Deadline());
    v1::NearTextRequest req;
    req.set_collection("c");
    req.set_query(RandomText(rng));
    req.set_k(50);
    req.set_mode("vector");
    v1::SearchResponse resp;
    ASSERT_TRUE(search->NearText(&ctx, req, &resp).ok());
    std::set<std::string> hits;
    for (const auto& h : resp.hits()) {
      EXPECT_TRUE(hits.insert(h.id()).second) << "vector search returned " << h.id() << " twice";
      EXPECT_FALSE(e.deleted.count(h.id())) << "vector search found deleted " << h.id();
    }
  }
  // The indexes hold exactly the stored documents.
  v1::VerifyResponse v = Verify(server, "c");
  EXPECT_EQ(v.stored(), listed.size());
  EXPECT_EQ(v.stored(), v.indexed());
  EXPECT_EQ(v.missing_from_index(), 0u);
  EXPECT_EQ(v.stale_in_index(), 0u);
  EXPECT_EQ(v.foreign_model(), 0u);
  EXPECT_EQ(v.keyword_indexed(), v.stored());
  EXPECT_EQ(v.keyword_missing(), 0u);
  EXPECT_EQ(v.keyword_stale(), 0u);
  EXPECT_TRUE(v.keyword_content_matches());
}

TEST(CrashTest, FiftyKillsDuringIngestSnapshotAndReindexLoseNothingAcknowledged) {
  TestDir dir("crash");
  std::mt19937_64 rng(20261121);
  Expected e;
  int next_id = 0;
  const int kCycles = 64;
  std::string model1;                 // fake:1's id: reindexes alternate between the two
  std::map<std::string, int> landed;  // kill point -> cycles it was hit
  int cycles_of_kind[4] = {0, 0, 0, 0};
  // The target of a reindex the last kill interrupted before its commit.
  std::string interrupted_to;
  const auto began = std::chrono::steady_clock::now();
  for (int cycle = 0; cycle < kCycles; ++cycle) {
    SCOPED_TRACE(absl::StrCat("cycle ", cycle));
    // Kinds rotate: ingest, ingest, snapshot, reindex (staging / commit).
    const int kind = cycle % 4;
    ++cycles_of_kind[kind];
    std::vector<std::string> extra;
    if (kind == 2) {
      // The Nth write of the first snapshot; a snapshot of one collection
      // (two index files) makes at least ten.
      extra = {"--snapshot-interval", "0", "--test-snapshot-pause-at",
               absl::StrCat(1 + (cycle / 4) % 10)};
    } else {
      extra = {"--snapshot-interval", "0.3"};
    }
    const bool commit_kill = kind == 3 && (cycle / 4) % 2 == 1;
    if (kind == 3) {
      // Slow enough that ReindexStatus can be seen mid-way; the kill waits
      // for it, not for a time.
      extra.insert(extra.end(), {"--test-encoder-delay-ms", "5"});
      if (commit_kill) extra.insert(extra.end(), {"--test-reindex-commit-delay-ms", "200"});
    }
    ServerProcess server(FakeServeArgs(dir, extra));
    ASSERT_TRUE(server.Start());
    if (cycle == 0) {
      auto cols = v1::Collections::NewStub(server.Channel());
      grpc::ClientContext ctx;
      ctx.set_deadline(Deadline());
      v1::CreateCollectionRequest req;
      req.mutable_spec()->set_name("c");
      req.mutable_spec()->mutable_index()->set_type("hnsw");
      v1::CreateCollectionResponse resp;
      ASSERT_TRUE(cols->Create(&ctx, req, &resp).ok());
      model1 = Verify(server, "c").model_id();
    } else {
      if (!interrupted_to.empty()) {
        // It resumed (RUNNING, or already DONE), or it had committed in the
        // instant before the kill (then the restart finished it): never
        // silently dropped.
        v1::ReindexStatusResponse rs = ReindexStatus(server, "c");
        if (rs.state() == v1::ReindexStatusResponse::IDLE) {
          EXPECT_EQ(Verify(server, "c").model_id(), interrupted_to)
              << "interrupted reindex dropped";
        } else {
          EXPECT_TRUE(rs.state() == v1::ReindexStatusResponse::RUNNING ||
                      rs.state() == v1::ReindexStatusResponse::DONE)
              << rs.error();
          EXPECT_EQ(rs.model_id(), interrupted_to);
        }
        interrupted_to.clear();
      }
      CheckAfterRestart(server, e, rng, "after the kill");
      if (::testing::Test::HasFatalFailure()) return;
      if (cycle % 10 == 9) {
        // A second restart (another crash, no writes) changes nothing.
        const v1::VerifyResponse before = Verify(server, "c");
        server.Kill();
        ASSERT_TRUE(server.Start());
        const v1::VerifyResponse after = Verify(server, "c");
        EXPECT_EQ(after.stored(), before.stored());
        EXPECT_EQ(after.indexed(), before.indexed());
        EXPECT_EQ(after.stale_in_index(), 0u);
      }
    }
    std::vector<std::string> known;
    for (const auto& [id, text] : e.acked) known.push_back(id);
    Writer writer(server, rng(), &next_id, std::move(known));
    std::string point;
    if (kind <= 1) {
      const int acks = 1 + static_cast<int>(rng() % 3);
      if (writer.WaitForOpenStreamAfter(acks)) point = "ingest";
    } else if (kind == 2) {
      ASSERT_TRUE(writer.WaitForOpenStreamAfter(1));
      std::thread snap([&] {
        auto admin = v1::Admin::NewStub(server.Channel());
        grpc::ClientContext ctx;
        ctx.set_deadline(Deadline(120));
        v1::SnapshotResponse resp;
        (void)admin->Snapshot(&ctx, v1::SnapshotRequest(), &resp);  // fails: killed
      });
      if (server.WaitForOutput("neodb: test pause before")) point = "snapshot";
      server.Kill();
      snap.join();
    } else {
      ASSERT_TRUE(writer.WaitForOpenStreamAfter(1));
      const std::string target =
          Verify(server, "c").model_id() == model1 ? dir.Sub("fake:2") : dir.Sub("fake:1");
      auto admin = v1::Admin::NewStub(server.Channel());
      grpc::ClientContext ctx;
      ctx.set_deadline(Deadline());
      v1::ReindexRequest req;
      req.set_collection("c");
      req.set_model_dir(target);
      v1::ReindexResponse resp;
      grpc::Status st = admin->Reindex(&ctx, req, &resp);
      // A reindex resumed after the last kill may be running already.
      EXPECT_TRUE(st.ok() || st.error_code() == grpc::StatusCode::FAILED_PRECONDITION)
          << st.error_message();
      while (true) {
        v1::ReindexStatusResponse rs = ReindexStatus(server, "c");
        if (rs.state() != v1::ReindexStatusResponse::RUNNING) break;
        if (commit_kill ? rs.committed() : (rs.done() > 0 && !rs.committed())) {
          point = commit_kill ? "reindex commit" : "reindex staging";
          if (!commit_kill) interrupted_to = rs.model_id();
          break;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(2));
      }
    }
    server.Kill();
    for (Op& op : writer.TakeOps()) {
      if (op.upsert) {
        e.Upserted(op.docs, op.ok);
      } else {
        e.Deleted(op.ids, op.ok);
      }
    }
    if (!point.empty()) ++landed[point];
  }
  // Final check after the last kill, once any resumed reindex is done.
  ServerProcess server(FakeServeArgs(dir, {}));
  ASSERT_TRUE(server.Start());
  WaitForReindexEnd(server, "c");
  CheckAfterRestart(server, e, rng, "final");
  EXPECT_EQ(server.Stop(), 0);
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - began).count();
  std::printf(
      "crash test: %d cycles in %.1f s; kills during ingest %d, snapshot %d, reindex staging %d, "
      "reindex commit %d; %zu documents acknowledged, %zu deleted, %zu possibly half-written\n",
      kCycles, seconds, landed["ingest"], landed["snapshot"], landed["reindex staging"],
      landed["reindex commit"], e.acked.size(), e.deleted.size(), e.tainted.size());
  EXPECT_GE(kCycles, 50);
  // Every snapshot cycle paused in its snapshot (the Nth write exists) and
  // every ingest cycle killed an open stream: neither depends on timing. A
  // reindex kill needs ReindexStatus to catch it mid-way, which a slow
  // encoder makes likely but no machine can promise, so only one is required
  // (the counts are printed).
  EXPECT_EQ(landed["snapshot"], cycles_of_kind[2]);
  EXPECT_EQ(landed["ingest"], cycles_of_kind[0] + cycles_of_kind[1]);
  EXPECT_GE(landed["reindex staging"] + landed["reindex commit"], 1);
  EXPECT_GT(e.acked.size(), 0u);
}

void Populate(ServerProcess& server, int n, std::vector<std::string>* texts) {
  auto cols = v1::Collections::NewStub(server.Channel());
  grpc::ClientContext ctx;
  ctx.set_deadline(Deadline());
  v1::CreateCollectionRequest req;
  req.mutable_spec()->set_name("r");
  v1::CreateCollectionResponse resp;
  ASSERT_TRUE(cols->Create(&ctx, req, &resp).ok());
  auto docs = v1::Documents::NewStub(server.Channel());
  std::mt19937_64 rng(5);
  for (int i = 0; i < n; i += 100) {
    grpc::ClientContext c2;
    c2.set_deadline(Deadline(120));
    v1::UpsertRequest u;
    u.set_collection("r");
    for (int j = i; j < i + 100; ++j) {
      auto* d = u.add_documents();
      d->set_id(absl::StrCat("d", j));
      d->set_text(RandomText(rng));
      texts->push_back(d->text());
    }
    v1::UpsertResponse ur;
    ASSERT_TRUE(docs->Upsert(&c2, u, &ur).ok());
  }
}

TEST(ReindexTest, SearchesSucceedDuringReindexAndAllVectorsMoveToNewModel) {
  TestDir dir("reindex");
  // A slow encoder makes the reindex take a while (fake model only).
  ServerProcess server(ServeArgs(dir, 1, {"--test-encoder-delay-ms", "20"}));
  ASSERT_TRUE(server.Start());
  std::vector<std::string> texts;
  Populate(server, 1000, &texts);
  auto admin = v1::Admin::NewStub(server.Channel());
  {
    grpc::ClientContext ctx;
    ctx.set_deadline(Deadline());
    v1::ReindexRequest req;
    req.set_collection("r");
    req.set_model_dir(ModelDir(dir, 2));
    v1::ReindexResponse resp;
    grpc::Status s = admin->Reindex(&ctx, req, &resp);
    ASSERT_TRUE(s.ok()) << s.error_message();
  }
  auto search = v1::Search::NewStub(server.Channel());
  int searches = 0, running_seen = 0;
  // Until the reindex ends, however long this machine takes (ctest's timeout
  // bounds a hang).
  while (true) {
    auto st = ReindexStatus(server, "r");
    if (st.state() == v1::ReindexStatusResponse::RUNNING) ++running_seen;
    grpc::ClientContext ctx;
    ctx.set_deadline(Deadline());
    v1::NearTextRequest req;
    req.set_collection("r");
    req.set_query(texts[searches % texts.size()]);
    req.set_k(5);
    v1::SearchResponse resp;
    grpc::Status s = search->NearText(&ctx, req, &resp);
    EXPECT_TRUE(s.ok()) << s.error_message();
    EXPECT_EQ(resp.hits_size(), 5);
    ++searches;
    if (st.state() == v1::ReindexStatusResponse::DONE) break;
    ASSERT_NE(st.state(), v1::ReindexStatusResponse::FAILED) << st.error();
  }
  EXPECT_GT(running_seen, 0);
  auto st = ReindexStatus(server, "r");
  ASSERT_EQ(st.state(), v1::ReindexStatusResponse::DONE);
  EXPECT_EQ(st.done(), 1000u);
  v1::VerifyResponse v = Verify(server, "r");
  EXPECT_EQ(v.model_id(), st.model_id());
  EXPECT_EQ(v.foreign_model(), 0u);  // every vector carries the new model id
  EXPECT_EQ(v.stored(), 1000u);
  EXPECT_EQ(v.indexed(), 1000u);
  EXPECT_EQ(server.Stop(), 0);
}

TEST(ReindexTest, KillMidReindexResumesAfterRestart) {
  TestDir dir("reindex_kill");
  std::string old_model, new_model;
  std::vector<std::string> texts;
  {
    ServerProcess server(ServeArgs(dir, 1, {"--test-encoder-delay-ms", "20"}));
    ASSERT_TRUE(server.Start());
    Populate(server, 1000, &texts);
    old_model = Verify(server, "r").model_id();
    auto admin = v1::Admin::NewStub(server.Channel());
    grpc::ClientContext ctx;
    ctx.set_deadline(Deadline());
    v1::ReindexRequest req;
    req.set_collection("r");
    req.set_model_dir(ModelDir(dir, 2));
    v1::ReindexResponse resp;
    ASSERT_TRUE(admin->Reindex(&ctx, req, &resp).ok());
    // Wait until it is visibly under way, then crash.
    v1::ReindexStatusResponse st;
    do {
      st = ReindexStatus(server, "r");
    } while (st.state() == v1::ReindexStatusResponse::RUNNING && st.done() == 0);
    ASSERT_EQ(st.state(), v1::ReindexStatusResponse::RUNNING);
    ASSERT_LT(st.done(), st.total());
    new_model = st.model_id();
    server.Kill();
  }
  // Still slow: the resumed reindex is seen running while the old model
  // serves.
  ServerProcess server(ServeArgs(dir, 1, {"--test-encoder-delay-ms", "20"}));
  ASSERT_TRUE(server.Start());
  v1::ReindexStatusResponse st = ReindexStatus(server, "r");
  EXPECT_NE(st.state(), v1::ReindexStatusResponse::IDLE) << "the interrupted reindex was dropped";
  EXPECT_EQ(st.model_id(), new_model);
  auto search = v1::Search::NewStub(server.Channel());
  auto find = [&](int i) {
    grpc::ClientContext ctx;
    ctx.set_deadline(Deadline());
    v1::NearTextRequest req;
    req.set_collection("r");
    req.set_query(texts[i]);
    req.set_k(1);
    req.set_include_text(true);
    v1::SearchResponse resp;
    ASSERT_TRUE(search->NearText(&ctx, req, &resp).ok());
    ASSERT_EQ(resp.hits_size(), 1);
    EXPECT_EQ(resp.hits(0).text(), texts[i]);
  };
  find(17);
  st = WaitForReindexEnd(server, "r");
  ASSERT_EQ(st.state(), v1::ReindexStatusResponse::DONE) << st.error();
  v1::VerifyResponse v = Verify(server, "r");
  EXPECT_EQ(v.model_id(), new_model);
  EXPECT_NE(v.model_id(), old_model);
  EXPECT_EQ(v.foreign_model(), 0u);
  EXPECT_EQ(v.stored(), 1000u);
  EXPECT_EQ(v.indexed(), 1000u);
  find(17);
  find(999);
  EXPECT_EQ(server.Stop(), 0);
}

}  // namespace
}  // namespace neodb::testing
