// The unary calls' reactor (api/unary_reactor.h) and its WorkerPool on a real
// gRPC server, in process on 127.0.0.1:0 (a test service, so the work is
// ours to hold): a call cancelled while it waits for a worker never runs
// its work and gives its queue place back; a full queue answers
// RESOURCE_EXHAUSTED at once; Shutdown waits for work in flight; a request
// that does not parse is INVALID_ARGUMENT and runs nothing. No timing:
// the work blocks until the test releases it, and the test waits for
// conditions (a bound of a minute only guards against a hang).

#include <chrono>
#include <condition_variable>
#include <future>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "api/request_parse_errors.h"
#include "api/unary_reactor.h"
#include "api/worker_pool.h"
#include "gmock/gmock.h"
#include "grpcpp/generic/generic_stub.h"
#include "gtest/gtest.h"
#include "neodb/v1/neodb.grpc.pb.h"

namespace neodb::api {
namespace {

using ::testing::ElementsAre;

// Waits until `done()` is true; false if it is not within a minute (a hang).
template <class Fn>
bool WaitFor(Fn done) {
  const auto give_up = std::chrono::steady_clock::now() + std::chrono::minutes(1);
  while (!done()) {
    if (std::chrono::steady_clock::now() > give_up) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return true;
}

// Embedding.Embed as a test service: the work records the call's first text
// as started, then blocks until Release().
class HeldEmbedding final : public v1::Embedding::CallbackService {
 public:
  explicit HeldEmbedding(WorkerPool* pool) : pool_(pool) {}

  grpc::ServerUnaryReactor* Embed(grpc::CallbackServerContext* ctx, const v1::EmbedRequest* req,
                                  v1::EmbedResponse* resp) override {
    return StartUnary(pool_, ctx, [this, req, resp] {
      const std::string tag = req->texts(0);
      std::unique_lock<std::mutex> lock(mu_);
      started_.push_back(tag);
      cv_.wait(lock, [this] { return released_; });
      resp->set_model_id(tag);
      ++finished_;
      return grpc::Status::OK;
    });
  }

  void Release() {
    std::lock_guard<std::mutex> lock(mu_);
    released_ = true;
    cv_.notify_all();
  }
  std::vector<std::string> started() const {
    std::lock_guard<std::mutex> lock(mu_);
    return started_;
  }
  int finished() const {
    std::lock_guard<std::mutex> lock(mu_);
    return finished_;
  }

 private:
  WorkerPool* const pool_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::vector<std::string> started_;
  bool released_ = false;
  int finished_ = 0;
};

// One call in flight, made with the callback client API.
struct Call {
  grpc::ClientContext ctx;
  v1::EmbedRequest req;
  v1::EmbedResponse resp;
  std::promise<grpc::Status> status;
};

class UnaryReactorTest : public ::testing::Test {
 protected:
  // One worker, one queue place.
  UnaryReactorTest() : pool_(/*threads=*/1, /*max_queued=*/1), service_(&pool_) {
    grpc::ServerBuilder builder;
    builder.AddListeningPort("127.0.0.1:0", grpc::InsecureServerCredentials(), &port_);
    builder.RegisterService(&service_);
    // As the server installs it (server.cc).
    InstallRequestParseErrorCapture();
    std::vector<std::unique_ptr<grpc::experimental::ServerInterceptorFactoryInterface>> icpt;
    icpt.push_back(std::make_unique<RequestParseErrorInterceptorFactory>());
    builder.experimental().SetInterceptorCreators(std::move(icpt));
    server_ = builder.BuildAndStart();
    channel_ = grpc::CreateChannel("127.0.0.1:" + std::to_string(port_),
                                   grpc::InsecureChannelCredentials());
    stub_ = v1::Embedding::NewStub(channel_);
  }
  ~UnaryReactorTest() override {
    service_.Release();
    if (server_) server_->Shutdown();
  }

  // Starts a call whose text is `tag`; its status comes in `call->status`.
  std::unique_ptr<Call> Start(const std::string& tag) {
    auto call = std::make_unique<Call>();
    call->ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::minutes(5));
    call->req.add_texts(tag);
    Call* c = call.get();
    stub_->async()->Embed(&c->ctx, &c->req, &c->resp,
                          [c](grpc::Status s) { c->status.set_value(std::move(s)); });
    return call;
  }

  WorkerPool pool_;
  HeldEmbedding service_;
  int port_ = 0;
  std::unique_ptr<grpc::Server> server_;
  std::shared_ptr<grpc::Channel> channel_;
  std::unique_ptr<v1::Embedding::Stub> stub_;
};

TEST_F(UnaryReactorTest, CancelledWhileQueuedNeverRunsAndFullQueueIsRefused) {
  ASSERT_NE(port_, 0);
  std::unique_ptr<Call> a = Start("a");  // takes the one worker and holds it
  ASSERT_TRUE(WaitFor([&] { return service_.started().size() == 1; }));
  std::unique_ptr<Call> b = Start("b");  // waits in the one queue place
  ASSERT_TRUE(WaitFor([&] { return pool_.queued() == 1; }));

  // The queue is full: refused at once, never run.
  std::unique_ptr<Call> c = Start("c");
  grpc::Status refused = c->status.get_future().get();
  EXPECT_EQ(refused.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED);
  EXPECT_NE(refused.error_message().find("server busy: 1 calls already wait for its 1 workers"),
            std::string::npos)
      << refused.error_message();
  EXPECT_EQ(pool_.refused(), 1);

  // b is cancelled while it waits (what a rapid reset does): the server
  // takes it out of the queue at once, before any worker is free.
  b->ctx.TryCancel();
  EXPECT_EQ(b->status.get_future().get().error_code(), grpc::StatusCode::CANCELLED);
  ASSERT_TRUE(WaitFor([&] { return pool_.withdrawn() == 1; }));
  EXPECT_EQ(pool_.queued(), 0u);

  // Its place is free again: d queues instead of being refused.
  std::unique_ptr<Call> d = Start("d");
  ASSERT_TRUE(WaitFor([&] { return pool_.queued() == 1; }));

  service_.Release();
  EXPECT_TRUE(a->status.get_future().get().ok());
  EXPECT_EQ(a->resp.model_id(), "a");
  EXPECT_TRUE(d->status.get_future().get().ok());
  EXPECT_EQ(d->resp.model_id(), "d");
  // Only a and d ever ran: b (cancelled while queued) and c (refused) did not.
  EXPECT_THAT(service_.started(), ElementsAre("a", "d"));
  EXPECT_EQ(pool_.refused(), 1);
}

TEST_F(UnaryReactorTest, DeadlinePassedWhileQueuedNeverRuns) {
  std::unique_ptr<Call> a = Start("a");
  ASSERT_TRUE(WaitFor([&] { return service_.started().size() == 1; }));
  auto b = std::make_unique<Call>();
  b->ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::milliseconds(50));
  b->req.add_texts("b");
  Call* bp = b.get();
  stub_->async()->Embed(&bp->ctx, &bp->req, &bp->resp,
                        [bp](grpc::Status s) { bp->status.set_value(std::move(s)); });
  EXPECT_EQ(b->status.get_future().get().error_code(), grpc::StatusCode::DEADLINE_EXCEEDED);
  // The server's deadline fired too (or b never reached it): either way b
  // leaves nothing queued, and the worker, once free, runs nothing of it.
  ASSERT_TRUE(WaitFor([&] { return pool_.queued() == 0; }));
  service_.Release();
  EXPECT_TRUE(a->status.get_future().get().ok());
  server_->Shutdown();
  server_.reset();
  EXPECT_THAT(service_.started(), ElementsAre("a"));
}

TEST_F(UnaryReactorTest, ShutdownWaitsForWorkInFlight) {
  std::unique_ptr<Call> a = Start("a");
  ASSERT_TRUE(WaitFor([&] { return service_.started().size() == 1; }));
  std::promise<int> finished_at_return;
  std::thread stopper([&] {
    server_->Shutdown();  // no deadline: waits for every call
    finished_at_return.set_value(service_.finished());
  });
  service_.Release();
  stopper.join();
  EXPECT_EQ(finished_at_return.get_future().get(), 1);
  EXPECT_TRUE(a->status.get_future().get().ok());
  server_.reset();
}

// A request that does not parse never reaches the work; the callback server
// answers it UNIMPLEMENTED with no message, which the interceptor turns into
// INVALID_ARGUMENT saying why (request_parse_errors.h).
TEST_F(UnaryReactorTest, UnparsableRequestIsInvalidArgumentAndNeverRuns) {
  grpc::GenericStub generic(channel_);
  grpc::ClientContext ctx;
  ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::minutes(5));
  // Field 1, length-delimited, 5 bytes announced, 2 sent.
  const std::string truncated = "\x0a\x05" "ab";
  grpc::Slice slice(truncated);
  grpc::ByteBuffer request(&slice, 1);
  grpc::ByteBuffer response;
  std::promise<grpc::Status> done;
  generic.UnaryCall(&ctx, "/neodb.v1.Embedding/Embed", grpc::StubOptions(), &request, &response,
                    [&done](grpc::Status s) { done.set_value(std::move(s)); });
  grpc::Status s = done.get_future().get();
  EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT) << s.error_message();
  EXPECT_EQ(s.error_message(), "the request message does not parse");
  EXPECT_TRUE(service_.started().empty());
}

}  // namespace
}  // namespace neodb::api
