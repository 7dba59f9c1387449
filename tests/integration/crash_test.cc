// Crash safety end to end: kill -9 the server at random moments during
// streaming ingests, several cycles. After each restart every acknowledged
// document is present with its text, the index holds exactly the stored ids
// (Admin.Verify: the vector and keyword indexes, the keyword one also against
// an index rebuilt from the stored documents), and a second restart changes
// nothing. Also: killing the
// server in the middle of a reindex leaves the old index serving.
#include <atomic>
#include <map>
#include <mutex>
#include <random>
#include <set>
#include <thread>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "neodb/v1/neodb.grpc.pb.h"
#include "tests/integration/test_env.h"

namespace neodb::testing {
namespace {

std::chrono::system_clock::time_point Deadline(int seconds = 30) {
  return std::chrono::system_clock::now() + std::chrono::seconds(seconds);
}

v1::VerifyResponse Verify(ServerProcess& s, const std::string& c) {
  auto admin = v1::Admin::NewStub(s.Channel());
  grpc::ClientContext ctx;
  ctx.set_deadline(Deadline(60));
  v1::VerifyRequest req;
  req.set_collection(c);
  v1::VerifyResponse r;
  grpc::Status st = admin->Verify(&ctx, req, &r);
  EXPECT_TRUE(st.ok()) << st.error_message();
  return r;
}

std::vector<std::string> ServeArgs(const TestDir& dir, int model,
                                   std::vector<std::string> extra = {}) {
  std::vector<std::string> a = {"--data-dir", dir.Sub("data"), "--snapshot-interval", "0.3"};
  for (auto& x : ModelArgs(dir, model)) a.push_back(x);
  for (auto& x : extra) a.push_back(x);
  return a;
}

TEST(CrashTest, KillDuringStreamingIngestLosesNothingAcknowledged) {
  TestDir dir("crash");
  std::mt19937_64 rng(20261121);
  std::map<std::string, std::string> acked;  // id → text
  // Ids written by a stream that was not acknowledged: they may hold that
  // stream's text (a committed batch of it) instead of the acknowledged one.
  std::set<std::string> tainted;
  int next_id = 0;
  const int kCycles = 6;
  const auto test_end = std::chrono::steady_clock::now() + std::chrono::seconds(240);
  for (int cycle = 0; cycle < kCycles && std::chrono::steady_clock::now() < test_end; ++cycle) {
    ServerProcess server(ServeArgs(dir, 1));
    ASSERT_TRUE(server.Start()) << "cycle " << cycle;
    auto docs = v1::Documents::NewStub(server.Channel());
    if (cycle == 0) {
      auto cols = v1::Collections::NewStub(server.Channel());
      grpc::ClientContext ctx;
      ctx.set_deadline(Deadline());
      v1::CreateCollectionRequest req;
      req.mutable_spec()->set_name("c");
      req.mutable_spec()->mutable_index()->set_type("hnsw");
      v1::CreateCollectionResponse resp;
      ASSERT_TRUE(cols->Create(&ctx, req, &resp).ok());
    } else {
      // Everything acknowledged before the last kill is here, with its text.
      std::vector<std::string> ids;
      for (auto& [id, text] : acked) ids.push_back(id);
      for (size_t i = 0; i < ids.size(); i += 500) {
        grpc::ClientContext ctx;
        ctx.set_deadline(Deadline());
        v1::GetRequest req;
        req.set_collection("c");
        for (size_t j = i; j < std::min(ids.size(), i + 500); ++j) req.add_ids(ids[j]);
        v1::GetResponse resp;
        ASSERT_TRUE(docs->Get(&ctx, req, &resp).ok());
        EXPECT_EQ(resp.missing_ids_size(), 0)
            << "cycle " << cycle << ": lost acknowledged documents";
        for (const auto& d : resp.documents()) {
          if (!tainted.count(d.id())) {
            EXPECT_EQ(d.text(), acked[d.id()]) << d.id();
          }
        }
      }
      v1::VerifyResponse v = Verify(server, "c");
      EXPECT_EQ(v.stored(), v.indexed()) << "cycle " << cycle;
      EXPECT_EQ(v.missing_from_index(), 0u) << "cycle " << cycle;
      EXPECT_EQ(v.stale_in_index(), 0u) << "cycle " << cycle;
      EXPECT_GE(v.stored(), acked.size());
      // The keyword index too: the stored ids, and the same postings as an
      // index rebuilt from the stored documents.
      EXPECT_EQ(v.keyword_indexed(), v.stored()) << "cycle " << cycle;
      EXPECT_EQ(v.keyword_missing(), 0u) << "cycle " << cycle;
      EXPECT_EQ(v.keyword_stale(), 0u) << "cycle " << cycle;
      EXPECT_TRUE(v.keyword_content_matches()) << "cycle " << cycle;
      // A second restart (another crash, no writes) changes nothing.
      server.Kill();
      ASSERT_TRUE(server.Start());
      v1::VerifyResponse again = Verify(server, "c");
      EXPECT_EQ(again.stored(), v.stored());
      EXPECT_EQ(again.indexed(), v.indexed());
      EXPECT_EQ(again.stale_in_index(), 0u);
      docs = v1::Documents::NewStub(server.Channel());
    }
    // Stream short ingests until a random kill.
    std::atomic<bool> stop{false};
    std::mutex mu;
    std::vector<std::pair<std::string, std::string>> newly_acked;  // in ack order
    std::set<std::string> newly_tainted;
    std::thread writer([&, seed = rng()] {
      std::mt19937_64 r(seed);
      int local_next = next_id;
      while (!stop) {
        grpc::ClientContext ctx;
        ctx.set_deadline(Deadline(10));
        v1::BulkIngestResponse resp;
        auto w = docs->BulkIngest(&ctx, &resp);
        std::map<std::string, std::string> batch_docs;
        for (int b = 0; b < 3; ++b) {
          v1::IngestBatch batch;
          batch.set_collection("c");
          for (int i = 0; i < 20; ++i) {
            auto* d = batch.add_documents();
            // Some overwrites of earlier ids too.
            std::string id = (r() % 5 == 0 && local_next > 0) ? absl::StrCat("d", r() % local_next)
                                                              : absl::StrCat("d", local_next++);
            d->set_id(id);
            d->set_text(RandomText(r));
            batch_docs[id] = d->text();
          }
          if (!w->Write(batch)) break;
        }
        w->WritesDone();
        const bool ok = w->Finish().ok();
        std::lock_guard<std::mutex> l(mu);
        if (ok) {
          for (auto& [id, t] : batch_docs) newly_acked.emplace_back(id, t);
        } else {
          for (auto& [id, t] : batch_docs) newly_tainted.insert(id);
          break;  // the server is gone
        }
      }
      std::lock_guard<std::mutex> l(mu);
      next_id = local_next;
    });
    // Kill at a random point after this cycle's first acknowledged stream:
    // waiting for the acknowledgement (not a fixed time) keeps every cycle
    // meaningful however loaded the machine is.
    while (true) {
      {
        std::lock_guard<std::mutex> l(mu);
        if (!newly_acked.empty() || !newly_tainted.empty()) break;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(rng() % 700));
    server.Kill();
    stop = true;
    writer.join();
    for (auto& [id, t] : newly_acked) {
      acked[id] = t;
      tainted.erase(id);
    }
    for (auto& id : newly_tainted) tainted.insert(id);
  }
  std::printf("crash test: %zu documents acknowledged, %zu possibly half-written, %d cycles\n",
              acked.size(), tainted.size(), kCycles);
  // Final check after the last kill.
  ServerProcess server(ServeArgs(dir, 1));
  ASSERT_TRUE(server.Start());
  v1::VerifyResponse v = Verify(server, "c");
  EXPECT_GE(v.stored(), acked.size());
  EXPECT_EQ(v.stored(), v.indexed());
  EXPECT_EQ(v.missing_from_index(), 0u);
  EXPECT_EQ(v.stale_in_index(), 0u);
  EXPECT_EQ(v.keyword_indexed(), v.stored());
  EXPECT_TRUE(v.keyword_content_matches());
  EXPECT_GT(acked.size(), 0u);
  EXPECT_EQ(server.Stop(), 0);
}

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

TEST(ReindexTest, KillMidReindexLeavesOldIndexServing) {
  TestDir dir("reindex_kill");
  std::string old_model;
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
    for (int i = 0; i < 500; ++i) {
      auto st = ReindexStatus(server, "r");
      if (st.done() > 0) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    auto st = ReindexStatus(server, "r");
    ASSERT_EQ(st.state(), v1::ReindexStatusResponse::RUNNING);
    ASSERT_LT(st.done(), st.total());
    server.Kill();
  }
  ServerProcess server(ServeArgs(dir, 1));
  ASSERT_TRUE(server.Start());
  v1::VerifyResponse v = Verify(server, "r");
  EXPECT_EQ(v.model_id(), old_model);
  EXPECT_EQ(v.foreign_model(), 0u);
  EXPECT_EQ(v.stored(), 1000u);
  EXPECT_EQ(v.indexed(), 1000u);
  auto search = v1::Search::NewStub(server.Channel());
  grpc::ClientContext ctx;
  ctx.set_deadline(Deadline());
  v1::NearTextRequest req;
  req.set_collection("r");
  req.set_query(texts[17]);
  req.set_k(1);
  req.set_include_text(true);
  v1::SearchResponse resp;
  ASSERT_TRUE(search->NearText(&ctx, req, &resp).ok());
  ASSERT_EQ(resp.hits_size(), 1);
  EXPECT_EQ(resp.hits(0).text(), texts[17]);
  EXPECT_EQ(server.Stop(), 0);
}

}  // namespace
}  // namespace neodb::testing
