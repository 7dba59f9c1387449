// A model per collection, end to end through `neodb serve` with real tiny
// NeoBERT checkpoints (three seeds = three models; the fake embedder in a
// build without the encoder): two collections on two models in one server;
// a reindex of one onto a third model while both are queried (no failure, no
// answer that mixes models); a restart; kill -9 inside a reindex, before and
// after its commit point: after the restart the collection is wholly on one
// model and Verify passes.
#include <atomic>
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

constexpr int kDocs = 300;
// A document's own text comes back first with cosine 1 up to float rounding
// (the same model embedded both); a query embedded by another model than the
// index's vectors cannot score that.
constexpr float kSelfScore = 0.999f;

std::chrono::system_clock::time_point Deadline(int seconds = 60) {
  return std::chrono::system_clock::now() + std::chrono::seconds(seconds);
}

std::vector<std::string> ServeArgs(const TestDir& dir, std::vector<std::string> extra = {}) {
  std::vector<std::string> a = {"--data-dir", dir.Sub("data"), "--snapshot-interval", "0.5"};
  for (auto& x : ModelArgs(dir, 1)) a.push_back(x);  // the default model
  for (auto& x : extra) a.push_back(x);
  return a;
}

class Client {
 public:
  explicit Client(ServerProcess& s)
      : cols_(v1::Collections::NewStub(s.Channel())),
        docs_(v1::Documents::NewStub(s.Channel())),
        search_(v1::Search::NewStub(s.Channel())),
        admin_(v1::Admin::NewStub(s.Channel())) {}

  void Create(const std::string& name, std::vector<std::string>* texts, uint64_t seed) {
    grpc::ClientContext ctx;
    ctx.set_deadline(Deadline());
    v1::CreateCollectionRequest req;
    req.mutable_spec()->set_name(name);
    req.mutable_spec()->mutable_index()->set_type("hnsw");
    v1::CreateCollectionResponse resp;
    grpc::Status s = cols_->Create(&ctx, req, &resp);
    ASSERT_TRUE(s.ok()) << s.error_message();
    std::mt19937_64 rng(seed);
    for (int i = 0; i < kDocs; i += 100) {
      grpc::ClientContext c2;
      c2.set_deadline(Deadline(120));
      v1::UpsertRequest u;
      u.set_collection(name);
      for (int j = i; j < i + 100; ++j) {
        auto* d = u.add_documents();
        d->set_id(absl::StrCat("d", j));
        d->set_text(RandomText(rng, 10));
        texts->push_back(d->text());
      }
      v1::UpsertResponse ur;
      s = docs_->Upsert(&c2, u, &ur);
      ASSERT_TRUE(s.ok()) << s.error_message();
    }
  }
  grpc::Status Reindex(const std::string& c, const std::string& model_dir) {
    grpc::ClientContext ctx;
    ctx.set_deadline(Deadline());
    v1::ReindexRequest req;
    req.set_collection(c);
    req.set_model_dir(model_dir);
    v1::ReindexResponse resp;
    return admin_->Reindex(&ctx, req, &resp);
  }
  v1::ReindexStatusResponse Status(const std::string& c) {
    grpc::ClientContext ctx;
    ctx.set_deadline(Deadline());
    v1::ReindexStatusRequest req;
    req.set_collection(c);
    v1::ReindexStatusResponse r;
    EXPECT_TRUE(admin_->ReindexStatus(&ctx, req, &r).ok());
    return r;
  }
  v1::ReindexStatusResponse WaitReindex(const std::string& c) {
    const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(300);
    v1::ReindexStatusResponse st;
    do {
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
      st = Status(c);
    } while (st.state() == v1::ReindexStatusResponse::RUNNING &&
             std::chrono::steady_clock::now() < until);
    return st;
  }
  v1::VerifyResponse Verify(const std::string& c) {
    grpc::ClientContext ctx;
    ctx.set_deadline(Deadline());
    v1::VerifyRequest req;
    req.set_collection(c);
    v1::VerifyResponse r;
    grpc::Status s = admin_->Verify(&ctx, req, &r);
    EXPECT_TRUE(s.ok()) << s.error_message();
    return r;
  }
  // Document i's own text, searched: the status and the response.
  grpc::Status SelfSearch(const std::string& c, const std::string& text, v1::SearchResponse* r) {
    grpc::ClientContext ctx;
    ctx.set_deadline(Deadline());
    v1::NearTextRequest req;
    req.set_collection(c);
    req.set_query(text);
    req.set_k(3);
    return search_->NearText(&ctx, req, r);
  }
  // Asserts a whole-model answer: the document first, scored as itself, on
  // one of `models` (more than one while a reindex may commit meanwhile).
  void ExpectSelfHit(const std::string& c, const std::vector<std::string>& texts, int i,
                     const std::set<std::string>& models) {
    v1::SearchResponse r;
    grpc::Status s = SelfSearch(c, texts[i], &r);
    ASSERT_TRUE(s.ok()) << s.error_message();
    EXPECT_TRUE(models.count(r.model_id())) << r.model_id();
    ASSERT_GT(r.hits_size(), 0);
    EXPECT_EQ(r.hits(0).id(), absl::StrCat("d", i));
    EXPECT_GT(r.hits(0).score(), kSelfScore);
  }
  void ExpectSelfHit(const std::string& c, const std::vector<std::string>& texts, int i,
                     const std::string& model_id) {
    ExpectSelfHit(c, texts, i, std::set<std::string>{model_id});
  }
  // Asserts that Verify finds the collection wholly on one of `models`.
  void ExpectWhole(const std::string& c, const std::set<std::string>& models) {
    v1::VerifyResponse v = Verify(c);
    EXPECT_TRUE(models.count(v.model_id())) << v.model_id();
    EXPECT_EQ(v.foreign_model(), 0u);
    EXPECT_EQ(v.stored(), static_cast<uint64_t>(kDocs));
    EXPECT_EQ(v.indexed(), static_cast<uint64_t>(kDocs));
    EXPECT_EQ(v.missing_from_index(), 0u);
    EXPECT_EQ(v.stale_in_index(), 0u);
  }
  void ExpectWhole(const std::string& c, const std::string& model_id) {
    ExpectWhole(c, std::set<std::string>{model_id});
  }

 private:
  std::unique_ptr<v1::Collections::Stub> cols_;
  std::unique_ptr<v1::Documents::Stub> docs_;
  std::unique_ptr<v1::Search::Stub> search_;
  std::unique_ptr<v1::Admin::Stub> admin_;
};

TEST(ModelsTest, TwoCollectionsOnTwoModelsThroughReindexAndRestart) {
  TestDir dir("models");
  std::vector<std::string> a_texts, b_texts;
  std::string model1, model2, model3;
  {
    ServerProcess server(ServeArgs(dir, {"--test-encoder-delay-ms", "30"}));
    ASSERT_TRUE(server.Start());
    Client c(server);
    c.Create("a", &a_texts, 1);
    c.Create("b", &b_texts, 2);
    model1 = c.Verify("a").model_id();
    // b onto model 2.
    ASSERT_TRUE(c.Reindex("b", ModelDir(dir, 2)).ok());
    auto st = c.WaitReindex("b");
    ASSERT_EQ(st.state(), v1::ReindexStatusResponse::DONE) << st.error();
    model2 = st.model_id();
    ASSERT_NE(model1, model2);
    c.ExpectWhole("a", model1);
    c.ExpectWhole("b", model2);
    c.ExpectSelfHit("a", a_texts, 5, model1);
    c.ExpectSelfHit("b", b_texts, 5, model2);

    // a onto model 3 while both are queried.
    std::atomic<bool> stop{false};
    std::atomic<int> failures{0}, mixed{0}, answers{0};
    std::mutex seen_mu;
    std::set<std::string> a_models_seen;
    auto query = [&](const std::string& col, const std::vector<std::string>& texts,
                     std::vector<std::string> allowed_models, uint64_t seed) {
      Client qc(server);
      std::mt19937_64 rng(seed);
      while (!stop) {
        int i = static_cast<int>(rng() % kDocs);
        v1::SearchResponse r;
        grpc::Status s = qc.SelfSearch(col, texts[i], &r);
        if (!s.ok() || r.hits_size() == 0) {
          ++failures;
          continue;
        }
        ++answers;
        bool model_ok = allowed_models.empty();
        for (auto& m : allowed_models) model_ok = model_ok || r.model_id() == m;
        if (col == "a") {
          std::lock_guard<std::mutex> lock(seen_mu);
          a_models_seen.insert(r.model_id());
        }
        if (!model_ok || r.hits(0).id() != absl::StrCat("d", i) ||
            r.hits(0).score() <= kSelfScore) {
          ++mixed;
        }
      }
    };
    ASSERT_TRUE(c.Reindex("a", ModelDir(dir, 3)).ok());
    // a's answers: model 1's or model 3's (checked below), each whole.
    std::thread qa(query, "a", std::cref(a_texts), std::vector<std::string>{}, 1);
    std::thread qb(query, "b", std::cref(b_texts), std::vector<std::string>{model2}, 2);
    st = c.WaitReindex("a");
    stop = true;
    qa.join();
    qb.join();
    ASSERT_EQ(st.state(), v1::ReindexStatusResponse::DONE) << st.error();
    model3 = st.model_id();
    EXPECT_EQ(failures, 0);
    EXPECT_EQ(mixed, 0);
    EXPECT_GT(answers, 0);
    for (const auto& m : a_models_seen) EXPECT_TRUE(m == model1 || m == model3) << m;
    c.ExpectWhole("a", model3);
    c.ExpectWhole("b", model2);
    EXPECT_EQ(server.Stop(), 0);
  }
  // Restart with model 1 as the default: each collection answers with its own.
  ServerProcess server(ServeArgs(dir));
  ASSERT_TRUE(server.Start());
  Client c(server);
  for (int i : {0, 77, kDocs - 1}) {
    c.ExpectSelfHit("a", a_texts, i, model3);
    c.ExpectSelfHit("b", b_texts, i, model2);
  }
  {
    auto admin = v1::Admin::NewStub(server.Channel());
    grpc::ClientContext ctx;
    ctx.set_deadline(Deadline());
    v1::StatsResponse stats;
    ASSERT_TRUE(admin->Stats(&ctx, v1::StatsRequest(), &stats).ok());
    EXPECT_EQ(stats.model_id(), model1);   // the default stayed
    EXPECT_EQ(stats.models_loaded(), 3u);  // the default, a's and b's
  }
  c.ExpectWhole("a", model3);
  c.ExpectWhole("b", model2);
  EXPECT_EQ(server.Stop(), 0);
}

TEST(ModelsTest, KillInsideAReindexLeavesTheCollectionOnOneModel) {
  TestDir dir("models_kill");
  std::vector<std::string> a_texts, b_texts;
  std::string model1, model2;
  const std::vector<std::string> slow = {"--test-encoder-delay-ms", "50",
                                         "--test-reindex-commit-delay-ms", "300"};
  {
    ServerProcess server(ServeArgs(dir, slow));
    ASSERT_TRUE(server.Start());
    Client c(server);
    c.Create("a", &a_texts, 1);
    c.Create("b", &b_texts, 2);
    model1 = c.Verify("a").model_id();
    ASSERT_TRUE(c.Reindex("a", ModelDir(dir, 2)).ok());
    // Under way, before its commit point: kill.
    v1::ReindexStatusResponse st;
    for (int i = 0; i < 3000; ++i) {
      st = c.Status("a");
      if (st.done() > 0) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    ASSERT_EQ(st.state(), v1::ReindexStatusResponse::RUNNING);
    model2 = st.model_id();
    server.Kill();
  }
  {
    ServerProcess server(ServeArgs(dir, slow));
    ASSERT_TRUE(server.Start());
    Client c(server);
    // Killed mid-way (almost surely before the commit point, which the
    // second kill below pins down): wholly one model at every check, either
    // one, since the reindex resumed at startup may commit between two of
    // them.
    c.ExpectWhole("a", {model1, model2});
    c.ExpectWhole("b", model1);
    c.ExpectSelfHit("a", a_texts, 11, {model1, model2});
    // Again, and kill inside the commit (it moves 256 documents per 300 ms).
    // The interrupted reindex resumed at startup (database_reindex.cc), so a
    // new request for it may find it running already.
    grpc::Status again = c.Reindex("a", ModelDir(dir, 2));
    ASSERT_TRUE(again.ok() || (again.error_code() == grpc::StatusCode::FAILED_PRECONDITION &&
                               again.error_message().find("already") != std::string::npos))
        << again.error_message();
    v1::ReindexStatusResponse st;
    const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(300);
    do {
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
      st = c.Status("a");
    } while (!st.committed() && st.state() == v1::ReindexStatusResponse::RUNNING &&
             std::chrono::steady_clock::now() < until);
    ASSERT_TRUE(st.committed());
    ASSERT_EQ(st.state(), v1::ReindexStatusResponse::RUNNING);
    ASSERT_EQ(st.model_id(), model2);
    server.Kill();
  }
  // The restart finishes the committed reindex: wholly the new model.
  ServerProcess server(ServeArgs(dir));
  ASSERT_TRUE(server.Start());
  Client c(server);
  c.ExpectWhole("a", model2);
  c.ExpectWhole("b", model1);
  for (int i : {0, 123, kDocs - 1}) {
    c.ExpectSelfHit("a", a_texts, i, model2);
    c.ExpectSelfHit("b", b_texts, i, model1);
  }
  EXPECT_EQ(server.Stop(), 0);
}

}  // namespace
}  // namespace neodb::testing
