// The search features past a plain top-k through the real server
// (`neodb serve --fake-model`): BatchNearText answers as the single queries
// do, in request order, a query's own error in its result without failing
// the others, and the cap on queries per call; threshold, offset, group-by
// and recommend over the wire (their exactness is the engine's property
// test, tests/engine/query_features_test.cc).
#include <cmath>
#include <random>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "neodb/v1/neodb.grpc.pb.h"
#include "tests/integration/test_env.h"

namespace neodb::testing {
namespace {

std::chrono::system_clock::time_point Deadline() {
  return std::chrono::system_clock::now() + std::chrono::seconds(60);
}

class SearchFeaturesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::make_unique<TestDir>("search_features");
    server_ = std::make_unique<ServerProcess>(std::vector<std::string>{
        "--data-dir", dir_->Sub("data"), "--snapshot-interval", "0", "--fake-model", "32"});
    ASSERT_TRUE(server_->Start());
    search_ = v1::Search::NewStub(server_->Channel());
    auto cols = v1::Collections::NewStub(server_->Channel());
    grpc::ClientContext ctx;
    ctx.set_deadline(Deadline());
    v1::CreateCollectionRequest create;
    create.mutable_spec()->set_name("c");
    v1::CreateCollectionResponse created;
    ASSERT_TRUE(cols->Create(&ctx, create, &created).ok());
    auto docs = v1::Documents::NewStub(server_->Channel());
    grpc::ClientContext uctx;
    uctx.set_deadline(Deadline());
    v1::UpsertRequest up;
    up.set_collection("c");
    std::mt19937_64 rng(3);
    const char* words[] = {"apple", "river", "stone", "cloud", "tiger", "maple", "ocean", "ember"};
    for (int i = 0; i < 40; ++i) {
      auto* d = up.add_documents();
      d->set_id(absl::StrCat("d", 10 + i));
      std::string text;
      for (int w = 0; w < 5; ++w) absl::StrAppend(&text, words[rng() % 8], " ");
      d->set_text(text);
      (*d->mutable_metadata())["g"].set_string_value(std::string(1, "abc"[i % 3]));
    }
    v1::UpsertResponse upr;
    grpc::Status st = docs->Upsert(&uctx, up, &upr);
    ASSERT_TRUE(st.ok()) << st.error_message();
  }

  grpc::Status NearText(v1::NearTextRequest req, v1::SearchResponse* resp) {
    grpc::ClientContext ctx;
    ctx.set_deadline(Deadline());
    req.set_collection("c");
    return search_->NearText(&ctx, req, resp);
  }
  grpc::Status Batch(const v1::BatchNearTextRequest& req, v1::BatchSearchResponse* resp) {
    grpc::ClientContext ctx;
    ctx.set_deadline(Deadline());
    return search_->BatchNearText(&ctx, req, resp);
  }

  std::unique_ptr<TestDir> dir_;
  std::unique_ptr<ServerProcess> server_;
  std::unique_ptr<v1::Search::Stub> search_;
};

v1::NearTextRequest Query(const std::string& text, const std::string& mode, int k) {
  v1::NearTextRequest q;
  q.set_query(text);
  q.set_mode(mode);
  q.set_k(k);
  q.set_include_metadata(true);
  return q;
}

void ExpectSame(const v1::SearchResponse& a, const v1::SearchResponse& b) {
  ASSERT_EQ(a.hits_size(), b.hits_size());
  for (int i = 0; i < a.hits_size(); ++i) {
    EXPECT_EQ(a.hits(i).id(), b.hits(i).id()) << i;
    EXPECT_EQ(a.hits(i).score(), b.hits(i).score()) << i;
  }
  EXPECT_EQ(a.mode(), b.mode());
}

TEST_F(SearchFeaturesTest, BatchAnswersAsSingleQueriesWithPerQueryErrors) {
  v1::BatchNearTextRequest batch;
  batch.set_collection("c");
  const std::vector<std::string> modes = {"vector", "keyword", "hybrid"};
  const char* texts[] = {"apple river", "stone cloud", "tiger", "maple ocean ember", "river"};
  std::vector<int> bad;
  for (int i = 0; i < 12; ++i) {
    v1::NearTextRequest q = Query(texts[i % 5], modes[i % 3], 3 + i % 4);
    if (i == 3) q.set_query("");  // a malformed query
    if (i == 6) q.set_k(5000);   // out of range
    if (i == 9) q.set_collection("other");
    if (i == 3 || i == 6 || i == 9) bad.push_back(i);
    if (i == 10) q.set_offset(2);
    *batch.add_queries() = q;
  }
  v1::BatchSearchResponse resp;
  grpc::Status st = Batch(batch, &resp);
  ASSERT_TRUE(st.ok()) << st.error_message();
  ASSERT_EQ(resp.results_size(), 12);
  for (int i = 0; i < 12; ++i) {
    SCOPED_TRACE(absl::StrCat("query ", i));
    const v1::BatchSearchResult& r = resp.results(i);
    if (std::find(bad.begin(), bad.end(), i) != bad.end()) {
      EXPECT_EQ(r.code(), grpc::StatusCode::INVALID_ARGUMENT) << r.message();
      EXPECT_FALSE(r.message().empty());
      continue;
    }
    ASSERT_EQ(r.code(), 0) << r.message();
    v1::SearchResponse single;
    ASSERT_TRUE(NearText(batch.queries(i), &single).ok());
    EXPECT_GT(single.hits_size(), 0);
    ExpectSame(r.response(), single);
  }
  EXPECT_NE(resp.results(6).message().find("k is 5000"), std::string::npos)
      << resp.results(6).message();
  EXPECT_NE(resp.results(9).message().find("queries[9].collection"), std::string::npos)
      << resp.results(9).message();
  std::cout << "[ batch    ] 12 queries: 9 answered as single queries, 3 errors in place\n";
}

TEST_F(SearchFeaturesTest, BatchCapEmptyAndUnknownCollection) {
  v1::BatchNearTextRequest batch;
  batch.set_collection("c");
  for (int i = 0; i < 256; ++i) *batch.add_queries() = Query("apple", "keyword", 2);
  v1::BatchSearchResponse resp;
  ASSERT_TRUE(Batch(batch, &resp).ok());
  EXPECT_EQ(resp.results_size(), 256);
  *batch.add_queries() = Query("apple", "keyword", 2);
  grpc::Status st = Batch(batch, &resp);
  EXPECT_EQ(st.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_NE(st.error_message().find("at most 256"), std::string::npos) << st.error_message();
  v1::BatchNearTextRequest empty;
  empty.set_collection("c");
  EXPECT_EQ(Batch(empty, &resp).error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  v1::BatchNearTextRequest unknown;
  unknown.set_collection("nope");
  *unknown.add_queries() = Query("apple", "vector", 2);
  EXPECT_EQ(Batch(unknown, &resp).error_code(), grpc::StatusCode::NOT_FOUND);
}

TEST_F(SearchFeaturesTest, ThresholdOffsetGroupByAndRecommendOverTheWire) {
  v1::SearchResponse all, page, cut, grouped;
  ASSERT_TRUE(NearText(Query("apple river", "vector", 10), &all).ok());
  ASSERT_EQ(all.hits_size(), 10);
  v1::NearTextRequest q = Query("apple river", "vector", 4);
  q.set_offset(3);
  ASSERT_TRUE(NearText(q, &page).ok());
  ASSERT_EQ(page.hits_size(), 4);
  for (int i = 0; i < 4; ++i) EXPECT_EQ(page.hits(i).id(), all.hits(3 + i).id());
  q = Query("apple river", "vector", 10);
  q.set_score_threshold(all.hits(5).score());
  ASSERT_TRUE(NearText(q, &cut).ok());
  ASSERT_GE(cut.hits_size(), 6);
  for (const auto& h : cut.hits()) EXPECT_GE(h.score(), all.hits(5).score());
  q.set_offset(995);  // offset + k past 1000
  grpc::Status st = NearText(q, &cut);
  EXPECT_EQ(st.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_NE(st.error_message().find("offset"), std::string::npos) << st.error_message();
  q = Query("apple river", "hybrid", 10);
  q.mutable_group_by()->set_field("g");
  q.mutable_group_by()->set_groups(3);
  q.mutable_group_by()->set_group_size(2);
  ASSERT_TRUE(NearText(q, &grouped).ok());
  EXPECT_EQ(grouped.hits_size(), 0);
  ASSERT_EQ(grouped.groups_size(), 3);
  for (const auto& g : grouped.groups()) {
    EXPECT_EQ(g.hits_size(), 2);
    for (const auto& h : g.hits()) {
      EXPECT_EQ(h.metadata().at("g").string_value(), g.value().string_value());
    }
  }
  v1::RecommendRequest rec;
  rec.set_collection("c");
  rec.add_positive_ids(all.hits(0).id());
  rec.add_negative_ids(all.hits(9).id());
  rec.set_k(5);
  v1::SearchResponse recommended;
  {
    grpc::ClientContext ctx;
    ctx.set_deadline(Deadline());
    st = search_->Recommend(&ctx, rec, &recommended);
  }
  ASSERT_TRUE(st.ok()) << st.error_message();
  EXPECT_EQ(recommended.hits_size(), 5);
  for (const auto& h : recommended.hits()) {
    EXPECT_NE(h.id(), all.hits(0).id());
    EXPECT_NE(h.id(), all.hits(9).id());
  }
  rec.add_positive_ids("missing-id");
  {
    grpc::ClientContext ctx;
    ctx.set_deadline(Deadline());
    st = search_->Recommend(&ctx, rec, &recommended);
  }
  EXPECT_EQ(st.error_code(), grpc::StatusCode::NOT_FOUND);
  EXPECT_NE(st.error_message().find("missing-id"), std::string::npos) << st.error_message();
}

}  // namespace
}  // namespace neodb::testing
