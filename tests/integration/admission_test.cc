// Hostile load end to end (issue 19): a maximal chunked document, idle ingest
// streams and a cancelled request must not take the server from other
// clients. The real `neodb serve` on 127.0.0.1 (free port) with an encoder
// slowed per pass (--test-encoder-delay-ms) and one sequence per pass
// (--max-batch-tokens 1), so the big request is hundreds of work items and
// the assertions are about the ORDER of events (short queries answered while
// the big request is still running; counters), not about how fast this
// machine is. Latencies are printed, never asserted beyond the deadlines.
// The ingest streams run on gRPC's callback API: idle ones hold no handler
// thread, so the stream tests open more of them than the server has threads
// and check that unary calls are served, and that the gate's caps and idle
// timer still apply.
#include <algorithm>
#include <atomic>
#include <random>
#include <thread>

#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "gtest/gtest.h"
#include "neodb/v1/neodb.grpc.pb.h"
#include "tests/integration/test_env.h"

namespace neodb::testing {
namespace {

using grpc::StatusCode;

std::chrono::system_clock::time_point Deadline(int seconds) {
  return std::chrono::system_clock::now() + std::chrono::seconds(seconds);
}

// Vocabulary words: one token each for the tiny model and the fake, so a
// text of n words is n tokens (plus [CLS]/[SEP] per 510-token window).
std::string Words(int n, uint64_t seed) {
  std::mt19937_64 rng(seed);
  const auto& v = Vocabulary();
  std::string s;
  s.reserve(static_cast<size_t>(n) * 7);
  for (int i = 0; i < n; ++i) {
    if (i) s += ' ';
    s += v[rng() % v.size()];
  }
  return s;
}

class AdmissionTest : public ::testing::Test {
 protected:
  AdmissionTest() : dir_(::testing::UnitTest::GetInstance()->current_test_info()->name()) {}

  void StartServer(std::vector<std::string> extra) {
    std::vector<std::string> args = {"--data-dir", dir_.Sub("data"), "--snapshot-interval", "0"};
    for (auto& a : ModelArgs(dir_, 1)) args.push_back(a);
    for (auto& a : extra) args.push_back(a);
    server_ = std::make_unique<ServerProcess>(args);
    ASSERT_TRUE(server_->Start()) << "server did not start";
    channel_ = server_->Channel();
    collections_ = v1::Collections::NewStub(channel_);
    documents_ = v1::Documents::NewStub(channel_);
    search_ = v1::Search::NewStub(channel_);
    admin_ = v1::Admin::NewStub(channel_);
  }

  void Create(const std::string& name, v1::Overflow overflow) {
    grpc::ClientContext ctx;
    ctx.set_deadline(Deadline(30));
    v1::CreateCollectionRequest req;
    req.mutable_spec()->set_name(name);
    req.mutable_spec()->mutable_index()->set_type("flat");
    req.mutable_spec()->set_overflow(overflow);
    v1::CreateCollectionResponse resp;
    grpc::Status s = collections_->Create(&ctx, req, &resp);
    ASSERT_TRUE(s.ok()) << s.error_message();
  }

  grpc::Status Upsert(const std::string& c, const std::string& id, const std::string& text,
                      grpc::ClientContext* ctx) {
    v1::UpsertRequest req;
    req.set_collection(c);
    auto* d = req.add_documents();
    d->set_id(id);
    d->set_text(text);
    v1::UpsertResponse resp;
    return documents_->Upsert(ctx, req, &resp);
  }
  grpc::Status Upsert(const std::string& c, const std::string& id, const std::string& text) {
    grpc::ClientContext ctx;
    ctx.set_deadline(Deadline(120));
    return Upsert(c, id, text, &ctx);
  }

  grpc::Status NearText(const std::string& c, const std::string& q) {
    grpc::ClientContext ctx;
    ctx.set_deadline(Deadline(60));
    v1::NearTextRequest req;
    req.set_collection(c);
    req.set_query(q);
    req.set_k(3);
    req.set_mode("vector");
    v1::SearchResponse resp;
    return search_->NearText(&ctx, req, &resp);
  }

  v1::StatsResponse Stats() {
    grpc::ClientContext ctx;
    ctx.set_deadline(Deadline(30));
    v1::StatsResponse resp;
    grpc::Status s = admin_->Stats(&ctx, v1::StatsRequest(), &resp);
    EXPECT_TRUE(s.ok()) << s.error_message();
    return resp;
  }

  // Polls Stats until `done` holds; the test runner's timeout bounds a hang.
  template <typename F>
  v1::StatsResponse WaitStats(F done) {
    while (true) {
      v1::StatsResponse s = Stats();
      if (done(s)) return s;
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
  }

  TestDir dir_;
  std::unique_ptr<ServerProcess> server_;
  std::shared_ptr<grpc::Channel> channel_;
  std::unique_ptr<v1::Collections::Stub> collections_;
  std::unique_ptr<v1::Documents::Stub> documents_;
  std::unique_ptr<v1::Search::Stub> search_;
  std::unique_ptr<v1::Admin::Stub> admin_;
};

// An ingest stream that sends nothing: it holds whatever the server gives it.
struct IdleStream {
  std::shared_ptr<grpc::Channel> channel;  // its own connection
  grpc::ClientContext ctx;
  v1::BulkIngestResponse resp;
  std::unique_ptr<grpc::ClientWriter<v1::IngestBatch>> writer;
};

// Opens a BulkIngest stream on a connection of its own (distinct channel
// args: gRPC does not share the subchannel), sending `api_key` if not empty.
std::unique_ptr<IdleStream> OpenIdleStream(const std::string& address, int i,
                                           const std::string& api_key = "") {
  grpc::ChannelArguments a;
  a.SetInt("neodb.test.connection", i);
  auto s = std::make_unique<IdleStream>();
  s->channel = grpc::CreateCustomChannel(address, grpc::InsecureChannelCredentials(), a);
  s->ctx.set_deadline(Deadline(300));
  if (!api_key.empty()) s->ctx.AddMetadata("authorization", "Bearer " + api_key);
  s->writer = v1::Documents::NewStub(s->channel)->BulkIngest(&s->ctx, &s->resp);
  return s;
}

TEST_F(AdmissionTest, QueriesAreServedDuringAMaximalChunkedUpsertAndIdleStreams) {
  constexpr int kThreads = 16;
  constexpr int kMaxOpenStreams = 8;
  // A request budget of 51200 tokens; idle streams are not timed out here
  // (that is the last test's subject).
  StartServer({"--threads", std::to_string(kThreads), "--max-open-streams",
               std::to_string(kMaxOpenStreams), "--max-batch-tokens", "1",
               "--test-encoder-delay-ms", "20", "--max-wait-ms", "0", "--max-request-tokens",
               "51200", "--stream-idle-timeout", "3600"});
  Create("small", v1::OVERFLOW_ERROR);
  Create("big", v1::OVERFLOW_CHUNK);
  for (int i = 0; i < 5; ++i) ASSERT_TRUE(Upsert("small", absl::StrCat("s", i), Words(8, i)).ok());

  // 32 idle ingest streams, each on its own connection: 8 are admitted and
  // stay open, the rest are refused at once. One at a time, each settled
  // before the next, so every refusal is the gate's.
  std::vector<std::unique_ptr<IdleStream>> idle;
  for (int i = 0; i < 32; ++i) {
    idle.push_back(OpenIdleStream(server_->address(), i));
    WaitStats([&](const v1::StatsResponse& s) {
      return s.open_streams() + s.streams_refused() == static_cast<uint64_t>(i + 1);
    });
  }
  v1::StatsResponse st = Stats();
  EXPECT_EQ(st.open_streams(), static_cast<uint64_t>(kMaxOpenStreams));
  EXPECT_EQ(st.streams_refused(), 32u - kMaxOpenStreams);

  // The maximal chunked document: just under the request budget; 50000
  // one-token words are 98 windows (50196 tokens), 98 passes.
  const std::string big_text = Words(50000, 99);
  const uint64_t items_before = Stats().embed_work_items();
  std::atomic<bool> big_done{false};
  grpc::Status big_status;
  std::thread big([&] {
    grpc::ClientContext ctx;
    ctx.set_deadline(Deadline(1200));  // 98 passes on a loaded machine
    big_status = Upsert("big", "doc", big_text, &ctx);
    big_done = true;
  });
  WaitStats([&](const v1::StatsResponse& s) { return s.embed_work_items() > items_before + 2; });

  // Short queries while the big document is being embedded.
  std::vector<double> ms;
  for (int i = 0; i < 10; ++i) {
    const auto t0 = std::chrono::steady_clock::now();
    grpc::Status s = NearText("small", Words(4, 1000 + i));
    ms.push_back(
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
    ASSERT_TRUE(s.ok()) << s.error_message();
  }
  // The ordering claim: every query was answered before the big request was.
  EXPECT_FALSE(big_done.load()) << "the big request finished before the short queries; "
                                   "the check proved nothing";
  std::sort(ms.begin(), ms.end());
  std::printf(
      "[ admission ] 10 near-text queries during a 98-pass upsert: p50 %.1f ms, "
      "max %.1f ms\n",
      ms[ms.size() / 2], ms.back());
  big.join();
  EXPECT_TRUE(big_status.ok()) << big_status.error_message();

  int refused = 0;
  // The refused streams got RESOURCE_EXHAUSTED naming the limit; the
  // admitted ones were still open all along.
  EXPECT_EQ(Stats().open_streams(), static_cast<uint64_t>(kMaxOpenStreams));
  for (auto& s : idle) {
    s->writer->WritesDone();  // an admitted stream ends with nothing ingested
    grpc::Status f = s->writer->Finish();
    if (f.error_code() == StatusCode::RESOURCE_EXHAUSTED) {
      ++refused;
      EXPECT_NE(f.error_message().find("--max-open-streams"), std::string::npos)
          << f.error_message();
    }
  }
  EXPECT_EQ(refused, 32 - kMaxOpenStreams);
  EXPECT_EQ(WaitStats([](const v1::StatsResponse& s) {
              return s.open_streams() == 0;
            }).streams_idle_cancelled(),
            0u);
}

TEST_F(AdmissionTest, CancelledBigRequestFreesTheEncoder) {
  StartServer({"--max-batch-tokens", "1", "--test-encoder-delay-ms", "20", "--max-wait-ms", "0"});
  Create("big", v1::OVERFLOW_CHUNK);
  const std::string big_text = Words(200000, 7);  // 393 windows
  const uint64_t items_before = Stats().embed_work_items();
  grpc::ClientContext ctx;
  ctx.set_deadline(Deadline(300));
  grpc::Status status;
  std::thread big([&] { status = Upsert("big", "doc", big_text, &ctx); });
  WaitStats([&](const v1::StatsResponse& s) { return s.embed_work_items() > items_before + 2; });
  ctx.TryCancel();
  big.join();
  EXPECT_EQ(status.error_code(), StatusCode::CANCELLED) << status.error_message();
  v1::StatsResponse s =
      WaitStats([](const v1::StatsResponse& s) { return s.embed_cancelled() == 1; });
  // The rest of the document was never run: the encoder is free.
  const uint64_t ran = s.embed_work_items() - items_before;
  EXPECT_EQ(ran + s.embed_skipped_sequences(), 393u);
  EXPECT_GT(s.embed_skipped_sequences(), 300u);
  // Nothing was stored, and the next request is served.
  EXPECT_TRUE(Upsert("big", "after", Words(10, 8)).ok());
  v1::StatsResponse after = Stats();
  EXPECT_EQ(after.embed_skipped_sequences(), s.embed_skipped_sequences());
}

TEST_F(AdmissionTest, OverlongInputIsRefusedBeforeItIsTokenized) {
  StartServer({"--max-request-tokens", "20000"});
  Create("strict", v1::OVERFLOW_ERROR);
  Create("chunked", v1::OVERFLOW_CHUNK);
  // overflow=error: 512 tokens × 32 bytes at most; 3 MB is refused on size.
  const std::string huge(3 << 20, 'a');
  grpc::Status s = Upsert("strict", "a", huge);
  EXPECT_EQ(s.error_code(), StatusCode::INVALID_ARGUMENT);
  EXPECT_NE(s.error_message().find("bytes"), std::string::npos) << s.error_message();
  // overflow=chunk: over the request budget is RESOURCE_EXHAUSTED.
  s = Upsert("chunked", "a", Words(30000, 3));
  EXPECT_EQ(s.error_code(), StatusCode::RESOURCE_EXHAUSTED);
  EXPECT_NE(s.error_message().find("--max-request-tokens"), std::string::npos) << s.error_message();
  // Within the budget: accepted.
  EXPECT_TRUE(Upsert("chunked", "b", Words(15000, 4)).ok());
  EXPECT_EQ(Stats().embedded_texts(), 1u);
}

TEST_F(AdmissionTest, IdleStreamIsCancelledAndItsAcknowledgedBatchesStay) {
  // Long enough for the first message to arrive on any machine; the
  // assertions are about what happens after it, not when.
  StartServer({"--stream-idle-timeout", "2"});
  Create("c", v1::OVERFLOW_ERROR);
  grpc::ClientContext ctx;
  ctx.set_deadline(Deadline(120));
  auto stream = documents_->Ingest(&ctx);
  v1::IngestBatch b;
  b.set_collection("c");
  auto* d = b.add_documents();
  d->set_id("kept");
  d->set_text(Words(5, 1));
  ASSERT_TRUE(stream->Write(b));
  v1::IngestAck ack;
  ASSERT_TRUE(stream->Read(&ack));
  EXPECT_EQ(ack.documents(), 1u);
  // Now the client goes quiet; the server cancels the stream.
  EXPECT_FALSE(stream->Read(&ack));
  grpc::Status s = stream->Finish();
  EXPECT_EQ(s.error_code(), StatusCode::CANCELLED) << s.error_message();
  v1::StatsResponse st =
      WaitStats([](const v1::StatsResponse& s) { return s.open_streams() == 0; });
  EXPECT_EQ(st.streams_idle_cancelled(), 1u);
  EXPECT_EQ(st.documents(), 1u);  // the acknowledged batch stayed
}

// Issue 19's fault was idle BulkIngest streams holding every sync handler
// thread. The streams run on gRPC's callback API now: with 2 handler threads
// (gRPC adds its own two), 24 idle streams — more than the threads and more
// than the old limit of 8 — are all admitted, and unary calls are still
// served while they stay open. A stream whose client cancels while its
// batch is being embedded stops: the rest of its encoder work is dropped and
// nothing of the batch is stored.
TEST_F(AdmissionTest, IdleStreamsBeyondTheHandlerThreadsHoldNoThread) {
  constexpr int kIdle = 24;
  StartServer({"--threads", "2", "--max-batch-tokens", "1", "--test-encoder-delay-ms", "20",
               "--max-wait-ms", "0", "--stream-idle-timeout", "3600"});
  Create("small", v1::OVERFLOW_ERROR);
  Create("big", v1::OVERFLOW_CHUNK);
  for (int i = 0; i < 3; ++i) ASSERT_TRUE(Upsert("small", absl::StrCat("s", i), Words(8, i)).ok());

  std::vector<std::unique_ptr<IdleStream>> idle;
  for (int i = 0; i < kIdle; ++i) idle.push_back(OpenIdleStream(server_->address(), i));
  v1::StatsResponse st = WaitStats(
      [&](const v1::StatsResponse& s) { return s.open_streams() == static_cast<uint64_t>(kIdle); });
  EXPECT_EQ(st.streams_refused(), 0u);

  // Unary calls while every stream is open and idle.
  for (int i = 0; i < 4; ++i) {
    grpc::Status s = NearText("small", Words(4, 100 + i));
    ASSERT_TRUE(s.ok()) << s.error_message();
  }
  ASSERT_TRUE(Upsert("small", "during", Words(8, 50)).ok());
  st = Stats();
  EXPECT_EQ(st.open_streams(), static_cast<uint64_t>(kIdle));
  EXPECT_EQ(st.documents(), 4u);

  // A stream whose client cancels mid-way: one document of 100000 one-token
  // words is 196 windows, one per encoder pass.
  {
    const uint64_t items_before = st.embed_work_items();
    grpc::ClientContext ctx;
    ctx.set_deadline(Deadline(300));
    v1::BulkIngestResponse resp;
    auto w = documents_->BulkIngest(&ctx, &resp);
    v1::IngestBatch b;
    b.set_collection("big");
    auto* d = b.add_documents();
    d->set_id("cancelled");
    d->set_text(Words(100000, 7));
    ASSERT_TRUE(w->Write(b));
    WaitStats([&](const v1::StatsResponse& s) {
      return s.embed_work_items() > items_before + 2 &&
             s.open_streams() == static_cast<uint64_t>(kIdle + 1);
    });
    ctx.TryCancel();
    EXPECT_EQ(w->Finish().error_code(), StatusCode::CANCELLED);
  }
  st = WaitStats([&](const v1::StatsResponse& s) {
    return s.embed_cancelled() == 1 && s.open_streams() == static_cast<uint64_t>(kIdle);
  });
  EXPECT_GT(st.embed_skipped_sequences(), 0u);  // the rest of the document never ran
  EXPECT_EQ(st.documents(), 4u);                // nothing of the cancelled batch stored

  // The idle streams were open all along; each ends cleanly.
  for (auto& s : idle) {
    s->writer->WritesDone();
    grpc::Status f = s->writer->Finish();
    EXPECT_TRUE(f.ok()) << f.error_message();
    EXPECT_EQ(s->resp.documents(), 0u);
  }
  st = WaitStats([](const v1::StatsResponse& s) { return s.open_streams() == 0; });
  EXPECT_EQ(st.streams_idle_cancelled(), 0u);
  EXPECT_EQ(st.streams_refused(), 0u);
}

// The idle timeout is a timer, not a thread per stream: more idle streams
// than handler threads all reach it, and each client sees CANCELLED.
TEST_F(AdmissionTest, IdleStreamsBeyondTheHandlerThreadsAreTimedOut) {
  constexpr int kIdle = 12;
  StartServer({"--threads", "2", "--stream-idle-timeout", "1"});
  std::vector<std::unique_ptr<IdleStream>> idle;
  for (int i = 0; i < kIdle; ++i) idle.push_back(OpenIdleStream(server_->address(), i));
  for (auto& s : idle) {
    // No WritesDone: the client stays quiet until the server gives up.
    grpc::Status f = s->writer->Finish();
    EXPECT_EQ(f.error_code(), StatusCode::CANCELLED) << f.error_message();
  }
  v1::StatsResponse st =
      WaitStats([](const v1::StatsResponse& s) { return s.open_streams() == 0; });
  EXPECT_EQ(st.streams_idle_cancelled(), static_cast<uint64_t>(kIdle));
  EXPECT_EQ(st.streams_refused(), 0u);
}

// With API keys, one key may hold at most --max-streams-per-key streams;
// another key still gets one.
TEST_F(AdmissionTest, StreamsArePerKeyCapped) {
  const std::string keys = dir_.Sub("keys");
  auto add_key = [&] {
    CommandResult r =
        RunNeodbCapture(absl::StrCat("keys add --role write --key-file ", keys), dir_.Sub(""));
    EXPECT_EQ(r.status, 0) << r.err;
    return std::string(absl::StripAsciiWhitespace(r.out));
  };
  const std::string a = add_key();
  const std::string b = add_key();
  StartServer({"--key-file", keys, "--max-open-streams", "4", "--max-streams-per-key", "2",
               "--stream-idle-timeout", "3600"});
  std::vector<std::unique_ptr<IdleStream>> open;
  for (int i = 0; i < 2; ++i) open.push_back(OpenIdleStream(server_->address(), i, a));
  auto stats = [&] {
    grpc::ClientContext ctx;
    ctx.set_deadline(Deadline(30));
    ctx.AddMetadata("authorization", "Bearer " + b);
    v1::StatsResponse resp;
    grpc::Status s = admin_->Stats(&ctx, v1::StatsRequest(), &resp);
    EXPECT_TRUE(s.ok()) << s.error_message();
    return resp;
  };
  while (stats().open_streams() != 2) std::this_thread::sleep_for(std::chrono::milliseconds(10));

  auto third = OpenIdleStream(server_->address(), 2, a);
  grpc::Status f = third->writer->Finish();
  EXPECT_EQ(f.error_code(), StatusCode::RESOURCE_EXHAUSTED) << f.error_message();
  EXPECT_NE(f.error_message().find("--max-streams-per-key"), std::string::npos)
      << f.error_message();

  open.push_back(OpenIdleStream(server_->address(), 3, b));  // another key: admitted
  while (stats().open_streams() != 3) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  EXPECT_EQ(stats().streams_refused(), 1u);
  for (auto& s : open) {
    s->writer->WritesDone();
    grpc::Status done = s->writer->Finish();
    EXPECT_TRUE(done.ok()) << done.error_message();
  }
}

}  // namespace
}  // namespace neodb::testing
