// End to end over gRPC: the real `neodb serve` on 127.0.0.1, driven by the
// generated C++ stubs. Happy path, validation over the wire, health and
// reflection, clean restart without rebuild.
#include <signal.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <condition_variable>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <random>
#include <set>

#include "absl/strings/str_cat.h"
#include "grpcpp/generic/generic_stub.h"
#include "gtest/gtest.h"
#include "neodb/v1/neodb.grpc.pb.h"
#include "tests/integration/test_env.h"

namespace neodb::testing {
namespace {

using grpc::StatusCode;

std::chrono::system_clock::time_point Deadline(int seconds = 30) {
  return std::chrono::system_clock::now() + std::chrono::seconds(seconds);
}

class ServerTest : public ::testing::Test {
 protected:
  ServerTest() : dir_(::testing::UnitTest::GetInstance()->current_test_info()->name()) {}

  void StartServer() {
    std::vector<std::string> args = {"--data-dir", dir_.Sub("data"), "--snapshot-interval", "0"};
    for (auto& a : ModelArgs(dir_, 1)) args.push_back(a);
    server_ = std::make_unique<ServerProcess>(args);
    ASSERT_TRUE(server_->Start()) << "server did not start";
    auto ch = server_->Channel();
    collections_ = v1::Collections::NewStub(ch);
    documents_ = v1::Documents::NewStub(ch);
    search_ = v1::Search::NewStub(ch);
    admin_ = v1::Admin::NewStub(ch);
  }

  grpc::Status CreateCollection(const std::string& name, const std::string& index = "flat") {
    grpc::ClientContext ctx;
    ctx.set_deadline(Deadline());
    v1::CreateCollectionRequest req;
    req.mutable_spec()->set_name(name);
    req.mutable_spec()->mutable_index()->set_type(index);
    v1::CreateCollectionResponse resp;
    return collections_->Create(&ctx, req, &resp);
  }

  // Streams `docs` in batches of `batch`; returns the final status.
  grpc::Status Ingest(const std::string& c, const std::vector<v1::Document>& docs, int batch,
                      v1::BulkIngestResponse* resp) {
    grpc::ClientContext ctx;
    ctx.set_deadline(Deadline(120));
    auto w = documents_->BulkIngest(&ctx, resp);
    v1::IngestBatch b;
    b.set_collection(c);
    for (size_t i = 0; i < docs.size(); ++i) {
      *b.add_documents() = docs[i];
      if (b.documents_size() == batch || i + 1 == docs.size()) {
        if (!w->Write(b)) break;
        b.clear_documents();
      }
    }
    w->WritesDone();
    return w->Finish();
  }

  grpc::Status NearText(const std::string& c, const std::string& q, int k, v1::SearchResponse* resp,
                        const v1::Filter* f = nullptr) {
    grpc::ClientContext ctx;
    ctx.set_deadline(Deadline());
    v1::NearTextRequest req;
    req.set_collection(c);
    req.set_query(q);
    req.set_k(k);
    req.set_include_text(true);
    req.set_include_metadata(true);
    if (f) *req.mutable_filter() = *f;
    return search_->NearText(&ctx, req, resp);
  }

  // Closes our channel first: the server's drain waits (up to --grace) for
  // connected clients to go.
  int StopServer() {
    collections_.reset();
    documents_.reset();
    search_.reset();
    admin_.reset();
    return server_->Stop();
  }

  v1::StatsResponse Stats() {
    grpc::ClientContext ctx;
    ctx.set_deadline(Deadline());
    v1::StatsResponse r;
    EXPECT_TRUE(admin_->Stats(&ctx, {}, &r).ok());
    return r;
  }

  TestDir dir_;
  std::unique_ptr<ServerProcess> server_;
  std::unique_ptr<v1::Collections::Stub> collections_;
  std::unique_ptr<v1::Documents::Stub> documents_;
  std::unique_ptr<v1::Search::Stub> search_;
  std::unique_ptr<v1::Admin::Stub> admin_;
};

std::vector<v1::Document> MakeDocs(int n, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<v1::Document> docs;
  for (int i = 0; i < n; ++i) {
    v1::Document d;
    d.set_id(absl::StrCat("doc", i));
    d.set_text(RandomText(rng));
    (*d.mutable_metadata())["n"].set_int_value(i);
    (*d.mutable_metadata())["even"].set_bool_value(i % 2 == 0);
    docs.push_back(std::move(d));
  }
  return docs;
}

TEST_F(ServerTest, IngestSearchGetDeleteList) {
  StartServer();
  ASSERT_TRUE(CreateCollection("docs").ok());
  auto docs = MakeDocs(300, 7);
  v1::BulkIngestResponse ing;
  grpc::Status s = Ingest("docs", docs, 64, &ing);
  ASSERT_TRUE(s.ok()) << s.error_message();
  EXPECT_EQ(ing.documents(), 300u);
  EXPECT_EQ(ing.batches(), 5u);
  EXPECT_GT(ing.tokens(), 300u * 8);

  // Every document is found by its own text.
  for (int i = 0; i < 300; i += 37) {
    v1::SearchResponse r;
    ASSERT_TRUE(NearText("docs", docs[i].text(), 3, &r).ok());
    ASSERT_GE(r.hits_size(), 1);
    EXPECT_EQ(r.hits(0).text(), docs[i].text());
    EXPECT_EQ(r.hits(0).id(), docs[i].id());
    EXPECT_EQ(r.hits(0).metadata().at("n").int_value(), i);
  }
  // Filtered: only even n >= 100, and k of them.
  v1::Filter f;
  auto* all = f.mutable_all();
  auto* eq = all->add_filters()->mutable_eq();
  eq->set_field("even");
  eq->mutable_value()->set_bool_value(true);
  auto* range = all->add_filters()->mutable_range();
  range->set_field("n");
  range->mutable_lower()->set_int_value(100);
  v1::SearchResponse r;
  ASSERT_TRUE(NearText("docs", docs[3].text(), 20, &r, &f).ok());
  EXPECT_EQ(r.hits_size(), 20);
  for (const auto& h : r.hits()) {
    EXPECT_TRUE(h.metadata().at("even").bool_value());
    EXPECT_GE(h.metadata().at("n").int_value(), 100);
  }

  {  // Get
    grpc::ClientContext ctx;
    ctx.set_deadline(Deadline());
    v1::GetRequest req;
    req.set_collection("docs");
    req.add_ids("doc5");
    req.add_ids("nope");
    v1::GetResponse resp;
    ASSERT_TRUE(documents_->Get(&ctx, req, &resp).ok());
    ASSERT_EQ(resp.documents_size(), 1);
    EXPECT_EQ(resp.documents(0).text(), docs[5].text());
    ASSERT_EQ(resp.missing_ids_size(), 1);
  }
  {  // Delete, then never returned
    grpc::ClientContext ctx;
    ctx.set_deadline(Deadline());
    v1::DeleteRequest req;
    req.set_collection("docs");
    req.add_ids("doc5");
    v1::DeleteResponse resp;
    ASSERT_TRUE(documents_->Delete(&ctx, req, &resp).ok());
    EXPECT_EQ(resp.deleted(), 1u);
    v1::SearchResponse sr;
    ASSERT_TRUE(NearText("docs", docs[5].text(), 10, &sr).ok());
    for (const auto& h : sr.hits()) EXPECT_NE(h.id(), "doc5");
  }
  {  // List pages through everything exactly once
    std::set<std::string> seen;
    std::string token;
    for (int page = 0; page < 100; ++page) {
      grpc::ClientContext ctx;
      ctx.set_deadline(Deadline());
      v1::ListDocumentsRequest req;
      req.set_collection("docs");
      req.set_page_size(50);
      req.set_page_token(token);
      v1::ListDocumentsResponse resp;
      ASSERT_TRUE(documents_->List(&ctx, req, &resp).ok());
      for (const auto& d : resp.documents()) EXPECT_TRUE(seen.insert(d.id()).second);
      token = resp.next_page_token();
      if (token.empty()) break;
    }
    EXPECT_EQ(seen.size(), 299u);
  }
  {  // Describe and Verify
    grpc::ClientContext ctx;
    ctx.set_deadline(Deadline());
    v1::DescribeCollectionRequest req;
    req.set_name("docs");
    v1::DescribeCollectionResponse resp;
    ASSERT_TRUE(collections_->Describe(&ctx, req, &resp).ok());
    EXPECT_EQ(resp.info().count(), 299u);
    EXPECT_EQ(resp.info().index_size(), 299u);
    EXPECT_EQ(resp.info().model_id(), Stats().model_id());
  }
  EXPECT_EQ(StopServer(), 0);
}

TEST_F(ServerTest, BadInputGetsPreciseStatusAndServerStaysUp) {
  StartServer();
  ASSERT_TRUE(CreateCollection("c").ok());
  auto upsert = [&](const std::string& coll, const std::string& text) {
    grpc::ClientContext ctx;
    ctx.set_deadline(Deadline());
    v1::UpsertRequest req;
    req.set_collection(coll);
    auto* d = req.add_documents();
    d->set_id("x");
    d->set_text(text);
    v1::UpsertResponse resp;
    return documents_->Upsert(&ctx, req, &resp);
  };
  grpc::Status s = upsert("c", "");
  EXPECT_EQ(s.error_code(), StatusCode::INVALID_ARGUMENT);
  EXPECT_EQ(s.error_message(), "document 'x': text is empty");
  s = upsert("c", "alpha \xff\xfe bravo");
  EXPECT_EQ(s.error_code(), StatusCode::INVALID_ARGUMENT);
  EXPECT_EQ(s.error_message(),
            "document 'x': text is not valid UTF-8 (bad byte sequence at offset 6)");
  s = upsert("missing", "alpha");
  EXPECT_EQ(s.error_code(), StatusCode::NOT_FOUND);
  EXPECT_NE(s.error_message().find("'missing'"), std::string::npos);
  std::string huge;
  for (int i = 0; i < 5000; ++i) huge += "alpha ";
  s = upsert("c", huge);  // 30000 bytes: refused on its size, before tokenizing
  EXPECT_EQ(s.error_code(), StatusCode::INVALID_ARGUMENT);
  EXPECT_NE(s.error_message().find("bytes (32 per token of the model's maximum"), std::string::npos)
      << s.error_message();
  s = upsert("c", huge.substr(0, 600 * 6));  // 600 words: within the bytes, over in tokens
  EXPECT_EQ(s.error_code(), StatusCode::INVALID_ARGUMENT);
  EXPECT_NE(s.error_message().find("tokens, over the model's maximum"), std::string::npos)
      << s.error_message();
  {  // wrong vector dimension
    grpc::ClientContext ctx;
    ctx.set_deadline(Deadline());
    v1::NearVectorRequest req;
    req.set_collection("c");
    req.add_vector(1.0f);
    v1::SearchResponse resp;
    s = search_->NearVector(&ctx, req, &resp);
    EXPECT_EQ(s.error_code(), StatusCode::INVALID_ARGUMENT);
    EXPECT_NE(s.error_message().find("dimension"), std::string::npos) << s.error_message();
  }
  {  // malformed filter
    v1::Filter f;
    f.mutable_eq()->set_field("");
    v1::SearchResponse resp;
    s = NearText("c", "alpha", 5, &resp, &f);
    EXPECT_EQ(s.error_code(), StatusCode::INVALID_ARGUMENT);
    EXPECT_NE(s.error_message().find("field is empty"), std::string::npos) << s.error_message();
    v1::Filter g;
    g.mutable_all();  // empty 'all'
    s = NearText("c", "alpha", 5, &resp, &g);
    EXPECT_EQ(s.error_code(), StatusCode::INVALID_ARGUMENT);
  }
  {  // oversized request: over the 32 MiB message limit
    grpc::ClientContext ctx;
    ctx.set_deadline(Deadline(60));
    v1::UpsertRequest req;
    req.set_collection("c");
    auto* d = req.add_documents();
    d->set_id("big");
    d->set_text(std::string(40 << 20, 'a'));
    v1::UpsertResponse resp;
    s = documents_->Upsert(&ctx, req, &resp);
    EXPECT_EQ(s.error_code(), StatusCode::RESOURCE_EXHAUSTED) << s.error_message();
  }
  {  // too many documents in one request
    grpc::ClientContext ctx;
    ctx.set_deadline(Deadline());
    v1::UpsertRequest req;
    req.set_collection("c");
    for (int i = 0; i < 1001; ++i) req.add_documents()->set_text("alpha");
    v1::UpsertResponse resp;
    s = documents_->Upsert(&ctx, req, &resp);
    EXPECT_EQ(s.error_code(), StatusCode::INVALID_ARGUMENT);
  }
  // Still serving, nothing was written.
  ASSERT_TRUE(upsert("c", "alpha bravo").ok());
  EXPECT_EQ(Stats().documents(), 1u);
  EXPECT_EQ(StopServer(), 0);
}

TEST_F(ServerTest, HealthServiceAnswersServing) {
  StartServer();
  grpc::GenericStub generic(server_->Channel());
  // grpc.health.v1.Health/Check with an empty HealthCheckRequest; the
  // response's status field 1 = SERVING encodes as 08 01.
  grpc::ClientContext ctx;
  ctx.set_deadline(Deadline());
  grpc::ByteBuffer req, resp;
  grpc::Slice empty("");
  req = grpc::ByteBuffer(&empty, 1);
  grpc::Status status;
  std::mutex mu;
  std::condition_variable cv;
  bool done = false;
  generic.UnaryCall(&ctx, "/grpc.health.v1.Health/Check", grpc::StubOptions(), &req, &resp,
                    [&](grpc::Status s) {
                      std::lock_guard<std::mutex> l(mu);
                      status = s;
                      done = true;
                      cv.notify_one();
                    });
  {
    std::unique_lock<std::mutex> l(mu);
    ASSERT_TRUE(cv.wait_for(l, std::chrono::seconds(30), [&] { return done; }));
  }
  ASSERT_TRUE(status.ok()) << status.error_message();
  std::vector<grpc::Slice> slices;
  ASSERT_TRUE(resp.Dump(&slices).ok());
  std::string bytes;
  for (auto& s : slices) bytes.append(reinterpret_cast<const char*>(s.begin()), s.size());
  EXPECT_EQ(bytes, std::string("\x08\x01", 2));
  EXPECT_EQ(StopServer(), 0);
}

// The server's threads other than the main one that do not block `sig`
// (libraries start threads before main() can block the server's signals;
// /proc/PID/task/TID/status "SigBlk" is the blocked mask in hex).
std::vector<pid_t> ThreadsNotBlocking(pid_t pid, int sig) {
  std::vector<pid_t> out;
  for (const auto& e : std::filesystem::directory_iterator("/proc/" + std::to_string(pid) + "/task")) {
    const pid_t tid = static_cast<pid_t>(std::stol(e.path().filename().string()));
    if (tid == pid) continue;  // the main thread shows none blocked while it waits in sigwait
    std::ifstream status(e.path() / "status");
    std::string line;
    while (std::getline(status, line)) {
      if (line.rfind("SigBlk:", 0) != 0) continue;
      const unsigned long long mask = std::stoull(line.substr(7), nullptr, 16);
      if ((mask & (1ULL << (sig - 1))) == 0) out.push_back(tid);
    }
  }
  return out;
}

TEST_F(ServerTest, SignalsLandingOnAnyThreadReachTheServersSignalLoop) {
  StartServer();
  // A SIGHUP or SIGTERM the kernel hands to a thread that does not block it
  // used to take the default action there: the process died instead of
  // reloading keys or shutting down cleanly.
  const pid_t pid = server_->pid();
  const std::vector<pid_t> hup = ThreadsNotBlocking(pid, SIGHUP);
  for (pid_t tid : hup) ASSERT_EQ(syscall(SYS_tgkill, pid, tid, SIGHUP), 0);
  Stats();  // still serving (a dead server fails the call)
  const std::vector<pid_t> term = ThreadsNotBlocking(pid, SIGTERM);
  if (!term.empty()) ASSERT_EQ(syscall(SYS_tgkill, pid, term[0], SIGTERM), 0);
  std::printf("threads not blocking SIGHUP: %zu, SIGTERM: %zu\n", hup.size(), term.size());
  EXPECT_EQ(StopServer(), 0);  // a clean exit, not death by the signal
}

TEST_F(ServerTest, CleanRestartKeepsDataAndSettingsWithoutRebuild) {
  StartServer();
  ASSERT_TRUE(CreateCollection("h", "hnsw").ok());
  auto docs = MakeDocs(200, 11);
  v1::BulkIngestResponse ing;
  ASSERT_TRUE(Ingest("h", docs, 50, &ing).ok());
  EXPECT_EQ(StopServer(), 0);  // SIGTERM: drain, snapshot, close

  StartServer();
  v1::StatsResponse st = Stats();
  EXPECT_EQ(st.snapshot_loads(), 1u);
  EXPECT_EQ(st.index_rebuilds(), 0u);
  EXPECT_EQ(st.replayed_changes(), 0u);
  EXPECT_EQ(st.documents(), 200u);
  grpc::ClientContext ctx;
  ctx.set_deadline(Deadline());
  v1::DescribeCollectionRequest req;
  req.set_name("h");
  v1::DescribeCollectionResponse d;
  ASSERT_TRUE(collections_->Describe(&ctx, req, &d).ok());
  EXPECT_EQ(d.info().index_type(), "HNSW32");
  EXPECT_EQ(d.info().index_size(), 200u);
  v1::SearchResponse r;
  ASSERT_TRUE(NearText("h", docs[42].text(), 1, &r).ok());
  ASSERT_EQ(r.hits_size(), 1);
  EXPECT_EQ(r.hits(0).text(), docs[42].text());
  EXPECT_EQ(StopServer(), 0);
}

}  // namespace
}  // namespace neodb::testing
