// Updates and deletes by filter under kill -9, end to end: the server
// commits them in atomic batches (engine/database.h, "Documents chosen by a
// filter"); --test-selection-pause-at 2 stops it after its first batch
// committed and before its second, and the test kills it there (on the
// pause line the server prints, not after a guessed time). After the
// restart (which replays the log) exactly the first batch is done, every
// document whole: all the patch's fields or none of them, text and vector
// untouched; the documents outside the filter are as they were; Verify
// finds the indexes equal to the store; and running the call again finishes
// the job. The same for a delete by filter.
#include <algorithm>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "neodb/v1/neodb.grpc.pb.h"
#include "tests/integration/collection_calls.h"
#include "tests/integration/test_env.h"

namespace neodb::testing {
namespace {

constexpr int kDocs = 1200;   // two groups of 600: three batches each
constexpr int kBatch = 256;   // engine::Database::kSelectionBatch

std::chrono::system_clock::time_point Deadline(int seconds = 60) {
  return std::chrono::system_clock::now() + std::chrono::seconds(seconds);
}

std::string Id(int i) { return absl::StrCat("d", 10000 + i); }

std::vector<std::string> Args(const TestDir& dir, bool pause) {
  std::filesystem::create_directories(dir.Sub("fake:1"));
  std::vector<std::string> a = {"--data-dir",  dir.Sub("data"), "--fake-model", "16",
                                "--model",     dir.Sub("fake:1"), "--models-dir", dir.Sub("")};
  if (pause) a.insert(a.end(), {"--test-selection-pause-at", "2"});
  return a;
}

struct Seen {
  std::string text;
  std::vector<float> vector;
  std::map<std::string, v1::Value> metadata;
};

std::map<std::string, Seen> ListAll(ServerProcess& s) {
  std::map<std::string, Seen> out;
  for (const v1::Document& d : ListAllDocuments(s, "c", /*full=*/true)) {
    Seen& seen = out[d.id()];
    seen.text = d.text();
    seen.vector.assign(d.vector().begin(), d.vector().end());
    for (const auto& [k, v] : d.metadata()) seen.metadata[k] = v;
  }
  return out;
}

void ExpectVerifyClean(ServerProcess& s, size_t documents) {
  const v1::VerifyResponse v = VerifyCollection(s, "c");
  EXPECT_EQ(v.stored(), documents);
  EXPECT_EQ(v.indexed(), documents);
  EXPECT_EQ(v.missing_from_index(), 0u);
  EXPECT_EQ(v.stale_in_index(), 0u);
  EXPECT_EQ(v.keyword_missing(), 0u);
  EXPECT_EQ(v.keyword_stale(), 0u);
  EXPECT_TRUE(v.keyword_content_matches());
}

uint64_t Count(ServerProcess& s, const std::string& filter_json) {
  auto docs = v1::Documents::NewStub(s.Channel());
  grpc::ClientContext ctx;
  ctx.set_deadline(Deadline());
  v1::CountRequest req;
  req.set_collection("c");
  req.set_filter_json(filter_json);
  v1::CountResponse resp;
  grpc::Status st = docs->Count(&ctx, req, &resp);
  EXPECT_TRUE(st.ok()) << st.error_message();
  return resp.count();
}

grpc::Status UpdateGroup0(ServerProcess& s, v1::UpdateMetadataResponse* resp) {
  auto docs = v1::Documents::NewStub(s.Channel());
  grpc::ClientContext ctx;
  ctx.set_deadline(Deadline());
  v1::UpdateMetadataRequest req;
  req.set_collection("c");
  req.set_filter_json(R"({"field":"grp","eq":0})");
  (*req.mutable_metadata())["v"].set_int_value(1);
  (*req.mutable_metadata())["w"].set_string_value("new");
  req.add_remove("old_only");
  return docs->UpdateMetadata(&ctx, req, resp);
}

grpc::Status DeleteGroup1(ServerProcess& s, v1::DeleteResponse* resp) {
  auto docs = v1::Documents::NewStub(s.Channel());
  grpc::ClientContext ctx;
  ctx.set_deadline(Deadline());
  v1::DeleteRequest req;
  req.set_collection("c");
  req.set_filter_json(R"({"field":"grp","eq":1})");
  return docs->Delete(&ctx, req, resp);
}

// Runs `call` on a thread, waits for the server's pause before its second
// batch, kills the server there and returns what the call got.
template <typename Call>
grpc::Status KillAtSecondBatch(ServerProcess& s, Call call) {
  grpc::Status got;
  std::thread t([&] { got = call(); });
  const bool paused = s.WaitForOutput("neodb: test pause before selection batch 2");
  s.Kill();
  t.join();
  EXPECT_TRUE(paused) << "the server never reached its second batch";
  return got;
}

TEST(SelectionCrashTest, KillMidUpdateOrDeleteByFilterLeavesWholeDocumentsAndResumes) {
  TestDir dir("selection_crash");
  std::vector<std::string> group0, group1;  // ids, in the byte order batches take
  {
    ServerProcess server(Args(dir, false));
    ASSERT_TRUE(server.Start());
    auto cols = v1::Collections::NewStub(server.Channel());
    grpc::ClientContext ctx;
    ctx.set_deadline(Deadline());
    v1::CreateCollectionRequest create;
    create.mutable_spec()->set_name("c");
    create.mutable_spec()->mutable_index()->set_type("hnsw");
    v1::CreateCollectionResponse created;
    ASSERT_TRUE(cols->Create(&ctx, create, &created).ok());
    auto docs = v1::Documents::NewStub(server.Channel());
    for (int start = 0; start < kDocs; start += 300) {
      v1::UpsertRequest up;
      up.set_collection("c");
      for (int i = start; i < start + 300; ++i) {
        v1::Document* d = up.add_documents();
        d->set_id(Id(i));
        d->set_text(absl::StrCat("document ", i, " of group ", i % 2));
        (*d->mutable_metadata())["grp"].set_int_value(i % 2);
        (*d->mutable_metadata())["v"].set_int_value(0);
        (*d->mutable_metadata())["w"].set_string_value("old");
        (*d->mutable_metadata())["old_only"].set_bool_value(true);
      }
      grpc::ClientContext uctx;
      uctx.set_deadline(Deadline());
      v1::UpsertResponse ur;
      grpc::Status st = docs->Upsert(&uctx, up, &ur);
      ASSERT_TRUE(st.ok()) << st.error_message();
    }
    for (int i = 0; i < kDocs; ++i) (i % 2 == 0 ? group0 : group1).push_back(Id(i));
    std::sort(group0.begin(), group0.end());
    std::sort(group1.begin(), group1.end());
  }
  std::map<std::string, Seen> before;
  {
    ServerProcess server(Args(dir, false));
    ASSERT_TRUE(server.Start());
    before = ListAll(server);
    ASSERT_EQ(before.size(), static_cast<size_t>(kDocs));
  }

  // --- An update by filter, killed after its first batch.
  {
    ServerProcess server(Args(dir, true));
    ASSERT_TRUE(server.Start());
    v1::UpdateMetadataResponse resp;
    grpc::Status st = KillAtSecondBatch(server, [&] { return UpdateGroup0(server, &resp); });
    EXPECT_FALSE(st.ok()) << "the call cannot have succeeded: the server died midway";
  }
  {
    ServerProcess server(Args(dir, false));
    ASSERT_TRUE(server.Start());
    const std::map<std::string, Seen> now = ListAll(server);
    ASSERT_EQ(now.size(), static_cast<size_t>(kDocs));
    std::set<std::string> first_batch(group0.begin(), group0.begin() + kBatch);
    for (const auto& [id, was] : before) {
      SCOPED_TRACE(id);
      const Seen& is = now.at(id);
      EXPECT_EQ(is.text, was.text);
      EXPECT_EQ(is.vector, was.vector);
      if (first_batch.count(id)) {  // updated whole
        EXPECT_EQ(is.metadata.at("v").int_value(), 1);
        EXPECT_EQ(is.metadata.at("w").string_value(), "new");
        EXPECT_EQ(is.metadata.count("old_only"), 0u);
        EXPECT_EQ(is.metadata.at("grp").int_value(), was.metadata.at("grp").int_value());
      } else {  // untouched
        EXPECT_EQ(is.metadata.at("v").int_value(), 0);
        EXPECT_EQ(is.metadata.at("w").string_value(), "old");
        EXPECT_EQ(is.metadata.count("old_only"), 1u);
      }
    }
    EXPECT_EQ(Count(server, R"({"field":"v","eq":1})"), static_cast<uint64_t>(kBatch));
    ExpectVerifyClean(server, kDocs);
    // The same call again finishes the job: the rest of group 0.
    v1::UpdateMetadataResponse resp;
    grpc::Status st = UpdateGroup0(server, &resp);
    ASSERT_TRUE(st.ok()) << st.error_message();
    EXPECT_EQ(resp.matched(), group0.size());
    EXPECT_EQ(resp.updated(), group0.size() - kBatch);
    EXPECT_EQ(Count(server, R"({"field":"v","eq":1})"), group0.size());
    EXPECT_EQ(Count(server, R"({"field":"old_only","exists":true})"), group1.size());
  }

  // --- A delete by filter, killed after its first batch.
  {
    ServerProcess server(Args(dir, true));
    ASSERT_TRUE(server.Start());
    v1::DeleteResponse resp;
    grpc::Status st = KillAtSecondBatch(server, [&] { return DeleteGroup1(server, &resp); });
    EXPECT_FALSE(st.ok());
  }
  {
    ServerProcess server(Args(dir, false));
    ASSERT_TRUE(server.Start());
    const std::map<std::string, Seen> now = ListAll(server);
    std::set<std::string> gone(group1.begin(), group1.begin() + kBatch);
    EXPECT_EQ(now.size(), kDocs - gone.size());
    for (const auto& [id, was] : before) {
      SCOPED_TRACE(id);
      EXPECT_EQ(now.count(id), gone.count(id) ? 0u : 1u);
      if (now.count(id)) {
        EXPECT_EQ(now.at(id).text, was.text);
      }
    }
    // A keyword search for a deleted document's own text does not find it.
    auto search = v1::Search::NewStub(server.Channel());
    grpc::ClientContext ctx;
    ctx.set_deadline(Deadline());
    v1::NearTextRequest q;
    q.set_collection("c");
    const int deleted_index = std::stoi(group1.front().substr(1)) - 10000;
    q.set_query(absl::StrCat("document ", deleted_index, " of group 1"));
    q.set_mode("keyword");
    q.set_k(20);
    v1::SearchResponse found;
    ASSERT_TRUE(search->NearText(&ctx, q, &found).ok());
    for (const auto& h : found.hits()) EXPECT_FALSE(gone.count(h.id())) << h.id();
    ExpectVerifyClean(server, now.size());
    v1::DeleteResponse resp;
    grpc::Status st = DeleteGroup1(server, &resp);
    ASSERT_TRUE(st.ok()) << st.error_message();
    EXPECT_EQ(resp.deleted(), group1.size() - kBatch);
    EXPECT_EQ(Count(server, ""), group0.size());
    ExpectVerifyClean(server, group0.size());
  }
}

}  // namespace
}  // namespace neodb::testing
