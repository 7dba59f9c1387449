// Hostile requests over the wire, against the real `neodb serve`: invalid
// UTF-8 in proto3 `string` fields (which protobuf refuses inside gRPC) comes
// back as INVALID_ARGUMENT naming the field, in unary and streaming calls;
// the collection limits (--max-collections, 64-byte names, no negative index
// tunables) hold. The server keeps serving throughout.
#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "neodb/v1/neodb.grpc.pb.h"
#include "tests/integration/server_process.h"
#include "tests/integration/test_env.h"

namespace neodb::testing {
namespace {

using grpc::StatusCode;

std::chrono::system_clock::time_point Deadline() {
  return std::chrono::system_clock::now() + std::chrono::seconds(30);
}

class HostileRequestsTest : public ::testing::Test {
 protected:
  HostileRequestsTest() : dir_(::testing::UnitTest::GetInstance()->current_test_info()->name()) {
    std::vector<std::string> args = {"--data-dir", dir_.Sub("data"), "--snapshot-interval", "0",
                                     "--max-collections", "3"};
    for (auto& a : ModelArgs(dir_, 1)) args.push_back(a);
    server_ = std::make_unique<ServerProcess>(args);
  }
  void SetUp() override {
    ASSERT_TRUE(server_->Start()) << "server did not start";
    auto ch = server_->Channel();
    collections_ = v1::Collections::NewStub(ch);
    documents_ = v1::Documents::NewStub(ch);
  }
  void TearDown() override {
    collections_.reset();
    documents_.reset();
    EXPECT_EQ(server_->Stop(), 0);
  }

  grpc::Status Create(const v1::CollectionSpec& spec) {
    grpc::ClientContext ctx;
    ctx.set_deadline(Deadline());
    v1::CreateCollectionRequest req;
    *req.mutable_spec() = spec;
    v1::CreateCollectionResponse resp;
    return collections_->Create(&ctx, req, &resp);
  }
  grpc::Status Create(const std::string& name) {
    v1::CollectionSpec spec;
    spec.set_name(name);
    return Create(spec);
  }
  grpc::Status Upsert(const v1::Document& d) {
    grpc::ClientContext ctx;
    ctx.set_deadline(Deadline());
    v1::UpsertRequest req;
    req.set_collection("c");
    *req.add_documents() = d;
    v1::UpsertResponse resp;
    return documents_->Upsert(&ctx, req, &resp);
  }
  static v1::Document Doc(const std::string& id) {
    v1::Document d;
    d.set_id(id);
    d.set_text("alpha bravo");
    return d;
  }

  TestDir dir_;
  std::unique_ptr<ServerProcess> server_;
  std::unique_ptr<v1::Collections::Stub> collections_;
  std::unique_ptr<v1::Documents::Stub> documents_;
};

// INVALID_ARGUMENT whose message names `field` (protobuf's full field name).
void ExpectNamesField(const grpc::Status& s, const std::string& field) {
  EXPECT_EQ(s.error_code(), StatusCode::INVALID_ARGUMENT) << s.error_message();
  EXPECT_EQ(s.error_message(), absl::StrCat("request field ", field, " is not valid UTF-8"));
}

TEST_F(HostileRequestsTest, InvalidUtf8InStringFieldsNamesTheField) {
  ExpectNamesField(Create("c\xff"), "neodb.v1.CollectionSpec.name");
  ASSERT_TRUE(Create("c").ok());
  {
    grpc::ClientContext ctx;
    ctx.set_deadline(Deadline());
    v1::DescribeCollectionRequest req;
    req.set_name("\xc3(");
    v1::DescribeCollectionResponse resp;
    ExpectNamesField(collections_->Describe(&ctx, req, &resp),
                     "neodb.v1.DescribeCollectionRequest.name");
  }
  ExpectNamesField(Upsert(Doc("\xff")), "neodb.v1.Document.id");
  v1::Document d = Doc("x");
  (*d.mutable_metadata())["key\xfe"].set_int_value(1);
  ExpectNamesField(Upsert(d), "neodb.v1.Document.MetadataEntry.key");
  d = Doc("x");
  (*d.mutable_metadata())["k"].set_string_value("\xed\xa0\x80");  // a UTF-16 surrogate
  ExpectNamesField(Upsert(d), "neodb.v1.Value.string_value");
  {
    grpc::ClientContext ctx;
    ctx.set_deadline(Deadline());
    v1::GetRequest req;
    req.set_collection("c");
    req.add_ids("ok");
    req.add_ids("\x80");
    v1::GetResponse resp;
    ExpectNamesField(documents_->Get(&ctx, req, &resp), "neodb.v1.GetRequest.ids");
  }
  {  // Streaming: a bad batch used to end the stream as if the client had finished.
    grpc::ClientContext ctx;
    ctx.set_deadline(Deadline());
    v1::BulkIngestResponse resp;
    auto w = documents_->BulkIngest(&ctx, &resp);
    v1::IngestBatch b;
    b.set_collection("c");
    *b.add_documents() = Doc("good");
    ASSERT_TRUE(w->Write(b));
    b.clear_documents();
    *b.add_documents() = Doc("bad\xff");
    w->Write(b);  // may fail once the server has answered
    w->WritesDone();
    ExpectNamesField(w->Finish(), "neodb.v1.Document.id");
  }
  // Still serving; a valid request is not blamed for the earlier ones.
  EXPECT_TRUE(Upsert(Doc("fine")).ok());
}

TEST_F(HostileRequestsTest, CollectionLimits) {
  ASSERT_TRUE(Create(std::string(64, 'n')).ok());
  grpc::Status s = Create(std::string(65, 'n'));
  EXPECT_EQ(s.error_code(), StatusCode::INVALID_ARGUMENT);
  EXPECT_EQ(s.error_message(), "collection name is 65 bytes; the limit is 64");
  v1::CollectionSpec spec;
  spec.set_name("h");
  spec.mutable_index()->set_type("hnsw");
  spec.mutable_index()->set_hnsw_m(-16);
  s = Create(spec);
  EXPECT_EQ(s.error_code(), StatusCode::INVALID_ARGUMENT);
  EXPECT_NE(s.error_message().find("index.hnsw_m is -16"), std::string::npos) << s.error_message();
  spec.mutable_index()->set_hnsw_m(0);
  spec.mutable_index()->set_hnsw_ef_search(-1);
  EXPECT_EQ(Create(spec).error_code(), StatusCode::INVALID_ARGUMENT);
  // --max-collections 3.
  ASSERT_TRUE(Create("b").ok());
  ASSERT_TRUE(Create("c").ok());
  s = Create("d");
  EXPECT_EQ(s.error_code(), StatusCode::RESOURCE_EXHAUSTED) << s.error_message();
  EXPECT_NE(s.error_message().find("--max-collections"), std::string::npos) << s.error_message();
}

}  // namespace
}  // namespace neodb::testing
