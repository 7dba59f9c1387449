// `neodb adapt --apply` on a sharded collection: two `neodb serve --nats`
// nodes on one tiny NeoBERT (the same directory), a collection of 2 shards
// held by both. adapt mines, trains and measures through node a, and its
// --apply (Admin Reindex) moves the whole cluster: both nodes then hold and
// serve the collection on the adapted model, every document re-embedded.
#include <chrono>
#include <filesystem>
#include <memory>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "neodb/v1/neodb.grpc.pb.h"
#include "nlohmann/json.hpp"
#include "tests/cluster/nats_server_process.h"
#include "tests/integration/adapt_test_util.h"
#include "tests/integration/server_process.h"
#include "tests/integration/test_env.h"

namespace neodb::testing {
namespace {

TEST(ClusterAdaptTest, AdaptApplyMovesEveryNodeOfAShardedCollection) {
#ifndef NEODB_HAVE_ENCODER
  GTEST_SKIP() << "neodb adapt needs the encoder";
#endif
  TestDir dir("cluster_adapt");
  auto nats = cluster::testing::NatsServerProcess::Start(dir.Sub("nats"));
  ASSERT_TRUE(nats.ok()) << nats.status();
  const std::string model = ModelDir(dir, 1);
  auto node = [&](const std::string& id) {
    return std::make_unique<ServerProcess>(std::vector<std::string>{
        "--data-dir", dir.Sub(id), "--model", model, "--models-dir", dir.Sub(""), "--nats",
        (*nats)->url(), "--node-id", id});
  };
  auto a = node("a"), b = node("b");
  ASSERT_TRUE(a->Start());
  ASSERT_TRUE(b->Start());
  std::vector<std::string> texts;
  {
    auto cols = v1::Collections::NewStub(a->Channel());
    v1::CreateCollectionRequest req;
    req.mutable_spec()->set_name("c");
    req.set_shards(2);
    req.set_replicas(2);
    v1::CreateCollectionResponse resp;
    grpc::ClientContext ctx;
    ctx.set_deadline(Deadline());
    grpc::Status st = cols->Create(&ctx, req, &resp);
    ASSERT_TRUE(st.ok()) << st.error_message();
    auto docs = v1::Documents::NewStub(b->Channel());
    v1::UpsertRequest u;
    u.set_collection("c");
    std::mt19937_64 rng(7);
    for (int i = 0; i < kDocs; ++i) {
      auto* d = u.add_documents();
      d->set_id(absl::StrCat("d", i));
      d->set_text(RandomText(rng, 12));
      texts.push_back(d->text());
    }
    v1::UpsertResponse ur;
    grpc::ClientContext uctx;
    uctx.set_deadline(Deadline(300));
    st = docs->Upsert(&uctx, u, &ur);
    ASSERT_TRUE(st.ok()) << st.error_message();
    // Both nodes hold both shards: wait until a has applied the writes.
    auto search = v1::Search::NewStub(a->Channel());
    v1::NearTextRequest q;
    q.set_collection("c");
    q.set_query(texts[0]);
    q.set_mode("keyword");
    q.set_consistency_token(ur.consistency_token());
    v1::SearchResponse r;
    grpc::ClientContext qctx;
    qctx.set_deadline(Deadline());
    ASSERT_TRUE(search->NearText(&qctx, q, &r).ok());
  }
  Admin ca(*a), cb(*b);
  const std::string old_id = ca.Describe("c").model_id();
  const std::string pairs = dir.Sub("pairs.jsonl");
  WritePrefixPairs(texts, pairs);
  const std::string out = dir.Sub("adapted");
  CommandResult r = RunNeodbCapture(
      absl::StrCat("adapt --collection c --pairs ", pairs, " --server ", a->address(),
                   " --eval-split 0.25 --steps 1 --batch-size 8 --apply --min-gain -2 --out ",
                   out),
      dir.Sub(""));
  ASSERT_EQ(r.status, 0) << r.err;
  ASSERT_TRUE(ReadJsonFile(out + "/adapt.json").value("applied", false)) << r.err;
  const std::string new_id = ca.Describe("c").model_id();
  EXPECT_NE(new_id, old_id);
  // Node b moves at its next reconcile (and rebuilds its copy from the new log).
  std::string b_id;
  for (int attempt = 0; attempt < 300 && b_id != new_id; ++attempt) {
    b_id = cb.Describe("c").model_id();
    if (b_id != new_id) std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  EXPECT_EQ(b_id, new_id);
  // Every document on both nodes, of the adapted model (Verify: none of another).
  for (int attempt = 0; attempt < 300; ++attempt) {
    auto admin = v1::Admin::NewStub(b->Channel());
    v1::VerifyRequest req;
    req.set_collection("c");
    v1::VerifyResponse v;
    grpc::ClientContext ctx;
    ctx.set_deadline(Deadline());
    ASSERT_TRUE(admin->Verify(&ctx, req, &v).ok());
    if (v.stored() == static_cast<uint64_t>(kDocs) || attempt == 299) {
      ca.ExpectWhole("c", new_id);
      cb.ExpectWhole("c", new_id);
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  EXPECT_EQ(a->Stop(), 0);
  EXPECT_EQ(b->Stop(), 0);
}

}  // namespace
}  // namespace neodb::testing
