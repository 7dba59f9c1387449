// Keyword and hybrid search through the real server: the three modes with a
// filter (min(k, matches)), explain, INVALID_ARGUMENT for bad modes, fusions,
// alphas and keyword settings; a restart loads the keyword snapshot (no
// rebuild), a corrupt one is rebuilt, and after kill -9 the keyword index
// returns exactly the stored documents holding each word.
#include <filesystem>
#include <fstream>
#include <map>
#include <random>
#include <set>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "gtest/gtest.h"
#include "neodb/v1/neodb.grpc.pb.h"
#include "tests/integration/collection_calls.h"
#include "tests/integration/test_env.h"

namespace neodb::testing {
namespace {

std::chrono::system_clock::time_point Deadline(int seconds = 60) {
  return std::chrono::system_clock::now() + std::chrono::seconds(seconds);
}

std::vector<std::string> ServeArgs(const TestDir& dir) {
  std::vector<std::string> a = {"--data-dir", dir.Sub("data"), "--snapshot-interval", "0"};
  for (auto& x : ModelArgs(dir, 1)) a.push_back(x);
  return a;
}

grpc::Status Create(ServerProcess& s, const v1::CollectionSpec& spec) {
  auto cols = v1::Collections::NewStub(s.Channel());
  grpc::ClientContext ctx;
  ctx.set_deadline(Deadline());
  v1::CreateCollectionRequest req;
  *req.mutable_spec() = spec;
  v1::CreateCollectionResponse resp;
  return cols->Create(&ctx, req, &resp);
}

void Upsert(ServerProcess& s, const std::vector<std::pair<std::string, std::string>>& docs,
            int64_t group_mod = 0) {
  auto stub = v1::Documents::NewStub(s.Channel());
  grpc::ClientContext ctx;
  ctx.set_deadline(Deadline());
  v1::UpsertRequest req;
  req.set_collection("c");
  for (const auto& [id, text] : docs) {
    auto* d = req.add_documents();
    d->set_id(id);
    d->set_text(text);
    if (group_mod > 0) {
      (*d->mutable_metadata())["group"].set_int_value(std::stoll(id.substr(1)) % group_mod);
    }
  }
  v1::UpsertResponse resp;
  grpc::Status st = stub->Upsert(&ctx, req, &resp);
  ASSERT_TRUE(st.ok()) << st.error_message();
}

grpc::Status Search(ServerProcess& s, v1::NearTextRequest req, v1::SearchResponse* resp) {
  auto stub = v1::Search::NewStub(s.Channel());
  grpc::ClientContext ctx;
  ctx.set_deadline(Deadline());
  req.set_collection("c");
  return stub->NearText(&ctx, req, resp);
}

v1::StatsResponse Stats(ServerProcess& s) {
  auto admin = v1::Admin::NewStub(s.Channel());
  grpc::ClientContext ctx;
  ctx.set_deadline(Deadline());
  v1::StatsResponse r;
  EXPECT_TRUE(admin->Stats(&ctx, v1::StatsRequest(), &r).ok());
  return r;
}

v1::VerifyResponse Verify(ServerProcess& s) { return VerifyCollection(s, "c"); }

TEST(KeywordServerTest, ModesFiltersExplainAndValidation) {
  TestDir dir("kw_modes");
  ServerProcess server(ServeArgs(dir));
  ASSERT_TRUE(server.Start());
  v1::CollectionSpec spec;
  spec.set_name("c");
  // Hostile settings first: each is INVALID_ARGUMENT and creates nothing.
  for (int i = 0; i < 4; ++i) {
    v1::CollectionSpec bad = spec;
    if (i == 0) bad.set_analyzer("klingon");
    if (i == 1) bad.set_bm25_b(2);
    if (i == 2) bad.set_bm25_k1(-1);
    if (i == 3) bad.set_title_weight(0);
    EXPECT_EQ(Create(server, bad).error_code(), grpc::StatusCode::INVALID_ARGUMENT) << i;
  }
  ASSERT_TRUE(Create(server, spec).ok());
  std::mt19937_64 rng(5);
  std::vector<std::pair<std::string, std::string>> docs;
  for (int i = 0; i < 60; ++i)
    docs.push_back({absl::StrCat("d", i), RandomText(rng, 6) + " common"});
  Upsert(server, docs, /*group_mod=*/6);  // group 0: 10 documents

  for (const std::string mode : {"keyword", "vector", "hybrid", ""}) {
    for (int k : {4, 30}) {
      v1::NearTextRequest req;
      req.set_query("common alpha");
      req.set_k(k);
      req.set_mode(mode);
      req.set_include_metadata(true);
      req.set_explain(true);
      req.set_filter_json(R"({"field":"group","eq":0})");
      v1::SearchResponse resp;
      grpc::Status st = Search(server, req, &resp);
      ASSERT_TRUE(st.ok()) << st.error_message();
      EXPECT_EQ(resp.hits_size(), std::min(k, 10)) << mode << " k=" << k;
      EXPECT_EQ(resp.mode(), mode.empty() ? "hybrid" : mode);
      for (const auto& h : resp.hits()) {
        EXPECT_EQ(h.metadata().at("group").int_value(), 0) << h.id();
        ASSERT_TRUE(h.has_explain());
        if (mode == "keyword") {
          EXPECT_GT(h.explain().keyword_rank(), 0);
          EXPECT_EQ(h.explain().vector_rank(), 0);
        } else if (mode == "vector") {
          EXPECT_GT(h.explain().vector_rank(), 0);
          EXPECT_EQ(h.explain().keyword_rank(), 0);
        } else {
          EXPECT_TRUE(h.explain().keyword_rank() > 0 || h.explain().vector_rank() > 0);
          EXPECT_FLOAT_EQ(h.score(), static_cast<float>(h.explain().fused_score()));
        }
      }
    }
  }
  // Weighted with an alpha: the response says which alpha was used.
  {
    v1::NearTextRequest req;
    req.set_query("common alpha");
    req.set_alpha(0.3);
    v1::SearchResponse resp;
    ASSERT_TRUE(Search(server, req, &resp).ok());
    EXPECT_DOUBLE_EQ(resp.alpha(), 0.3);
  }
  // Bad modes, fusions and alphas.
  for (int i = 0; i < 5; ++i) {
    v1::NearTextRequest req;
    req.set_query("common");
    if (i == 0) req.set_mode("fuzzy");
    if (i == 1) req.set_fusion("mean");
    if (i == 2) req.set_alpha(1.5);
    if (i == 3) {
      req.set_fusion("rrf");
      req.set_alpha(0.3);
    }
    if (i == 4) req.set_alpha(std::nan(""));
    v1::SearchResponse resp;
    EXPECT_EQ(Search(server, req, &resp).error_code(), grpc::StatusCode::INVALID_ARGUMENT) << i;
  }
  EXPECT_EQ(server.Stop(), 0);
}

TEST(KeywordServerTest, SnapshotLoadCorruptRebuildAndKill9Recount) {
  TestDir dir("kw_restart");
  std::map<std::string, std::string> model;  // what the store holds
  std::mt19937_64 rng(17);
  auto write = [&](ServerProcess& s, int n) {
    std::vector<std::pair<std::string, std::string>> docs;
    for (int i = 0; i < n; ++i) {
      std::string id = absl::StrCat("d", rng() % 300);
      std::string text = RandomText(rng, 1 + rng() % 8);
      docs.push_back({id, text});
      model[id] = text;
    }
    // Later duplicates in one request win, as in the model.
    Upsert(s, docs);
    std::vector<std::string> gone;
    for (int i = 0; i < n / 5; ++i) gone.push_back(absl::StrCat("d", rng() % 300));
    auto stub = v1::Documents::NewStub(s.Channel());
    grpc::ClientContext ctx;
    ctx.set_deadline(Deadline());
    v1::DeleteRequest req;
    req.set_collection("c");
    for (const auto& id : gone) {
      req.add_ids(id);
      model.erase(id);
    }
    v1::DeleteResponse resp;
    ASSERT_TRUE(stub->Delete(&ctx, req, &resp).ok());
  };
  // Each vocabulary word finds exactly the stored documents holding it.
  auto recount = [&](ServerProcess& s) {
    for (const std::string& w : Vocabulary()) {
      std::set<std::string> want;
      for (const auto& [id, text] : model) {
        for (auto t : absl::StrSplit(text, ' ')) {
          if (t == w) want.insert(id);
        }
      }
      v1::NearTextRequest req;
      req.set_query(w);
      req.set_mode("keyword");
      req.set_k(1000);
      v1::SearchResponse resp;
      ASSERT_TRUE(Search(s, req, &resp).ok());
      std::set<std::string> got;
      for (const auto& h : resp.hits()) got.insert(h.id());
      EXPECT_EQ(got, want) << w;
    }
    v1::VerifyResponse v = Verify(s);
    EXPECT_EQ(v.keyword_indexed(), model.size());
    EXPECT_EQ(v.keyword_missing(), 0u);
    EXPECT_EQ(v.keyword_stale(), 0u);
    EXPECT_TRUE(v.keyword_content_matches());
  };

  ServerProcess server(ServeArgs(dir));
  ASSERT_TRUE(server.Start());
  v1::CollectionSpec spec;
  spec.set_name("c");
  ASSERT_TRUE(Create(server, spec).ok());
  for (int i = 0; i < 4; ++i) write(server, 100);
  recount(server);
  EXPECT_EQ(server.Stop(), 0);  // SIGTERM: snapshots

  ASSERT_TRUE(server.Start());
  v1::StatsResponse st = Stats(server);
  EXPECT_EQ(st.keyword_snapshot_loads(), 1u);
  EXPECT_EQ(st.keyword_rebuilds(), 0u);
  recount(server);
  EXPECT_EQ(server.Stop(), 0);

  const std::string snap = dir.Sub("data/snapshots/c/keyword.snap");
  ASSERT_TRUE(std::filesystem::exists(snap));
  {
    std::fstream f(snap, std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(static_cast<std::streamoff>(std::filesystem::file_size(snap) / 3));
    f.write("\x5a\x5a\x5a\x5a\x5a\x5a", 6);
  }
  ASSERT_TRUE(server.Start());
  st = Stats(server);
  EXPECT_EQ(st.keyword_snapshot_loads(), 0u);
  EXPECT_EQ(st.keyword_rebuilds(), 1u);
  recount(server);

  // Writes, then kill -9: the snapshot written at startup plus the log.
  for (int i = 0; i < 3; ++i) write(server, 100);
  server.Kill();
  ASSERT_TRUE(server.Start());
  recount(server);
  EXPECT_EQ(server.Stop(), 0);
}

}  // namespace
}  // namespace neodb::testing
