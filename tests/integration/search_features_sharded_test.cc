// The search features past a plain top-k are not yet merged by a sharded
// collection's fan-out (api/fan_out.cc): one `neodb serve --nats` node and a
// collection of 2 shards; score_threshold, offset, group_by, Recommend and
// BatchNearText on it are FAILED_PRECONDITION naming the feature, never an
// answer computed over part of the collection; a plain search still works.
#include <memory>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "neodb/v1/neodb.grpc.pb.h"
#include "tests/cluster/nats_server_process.h"
#include "tests/integration/server_process.h"
#include "tests/integration/test_env.h"

namespace neodb::testing {
namespace {

std::chrono::system_clock::time_point Deadline() {
  return std::chrono::system_clock::now() + std::chrono::seconds(60);
}

void ExpectRefused(const grpc::Status& st, const std::string& feature) {
  EXPECT_EQ(st.error_code(), grpc::StatusCode::FAILED_PRECONDITION) << st.error_message();
  EXPECT_NE(st.error_message().find(feature), std::string::npos) << st.error_message();
  EXPECT_NE(st.error_message().find("not yet for sharded collections"), std::string::npos)
      << st.error_message();
}

TEST(SearchFeaturesShardedTest, NewFeaturesAreRefusedForShardedCollections) {
  TestDir dir("search_features_sharded");
  auto nats = cluster::testing::NatsServerProcess::Start(dir.Sub("nats"));
  ASSERT_TRUE(nats.ok()) << nats.status();
  ServerProcess node(std::vector<std::string>{"--data-dir", dir.Sub("a"), "--fake-model", "32",
                                              "--nats", (*nats)->url(), "--node-id", "a"});
  ASSERT_TRUE(node.Start());
  {
    auto cols = v1::Collections::NewStub(node.Channel());
    v1::CreateCollectionRequest req;
    req.mutable_spec()->set_name("c");
    req.set_shards(2);
    v1::CreateCollectionResponse resp;
    grpc::ClientContext ctx;
    ctx.set_deadline(Deadline());
    grpc::Status st = cols->Create(&ctx, req, &resp);
    ASSERT_TRUE(st.ok()) << st.error_message();
  }
  auto search = v1::Search::NewStub(node.Channel());
  auto near_text = [&](const v1::NearTextRequest& r) {
    grpc::ClientContext ctx;
    ctx.set_deadline(Deadline());
    v1::SearchResponse resp;
    return search->NearText(&ctx, r, &resp);
  };
  auto near_vector = [&](const v1::NearVectorRequest& r) {
    grpc::ClientContext ctx;
    ctx.set_deadline(Deadline());
    v1::SearchResponse resp;
    return search->NearVector(&ctx, r, &resp);
  };
  v1::NearTextRequest plain;
  plain.set_collection("c");
  plain.set_query("apple");
  plain.set_mode("keyword");
  grpc::Status st = near_text(plain);
  ASSERT_TRUE(st.ok()) << st.error_message();

  v1::NearTextRequest t = plain;
  t.set_score_threshold(0.5f);
  ExpectRefused(near_text(t), "score_threshold");
  t = plain;
  t.set_offset(3);
  ExpectRefused(near_text(t), "offset");
  t = plain;
  t.mutable_group_by()->set_field("g");
  ExpectRefused(near_text(t), "group_by");
  v1::NearVectorRequest v;
  v.set_collection("c");
  v.mutable_vector()->Resize(32, 0.5f);
  v.set_offset(1);
  ExpectRefused(near_vector(v), "offset");
  {
    v1::RecommendRequest r;
    r.set_collection("c");
    r.add_positive_ids("x");
    grpc::ClientContext ctx;
    ctx.set_deadline(Deadline());
    v1::SearchResponse resp;
    ExpectRefused(search->Recommend(&ctx, r, &resp), "recommend");
  }
  {
    v1::BatchNearTextRequest b;
    b.set_collection("c");
    *b.add_queries() = plain;
    grpc::ClientContext ctx;
    ctx.set_deadline(Deadline());
    v1::BatchSearchResponse resp;
    ExpectRefused(search->BatchNearText(&ctx, b, &resp), "batch search");
  }
}

}  // namespace
}  // namespace neodb::testing
