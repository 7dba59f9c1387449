// EmbedBatcher: batching, bounded queue, deadlines, error isolation.
#include "api/engine/embed_batcher.h"

#include <atomic>
#include <condition_variable>
#include <mutex>
#include <thread>
#include <vector>

#include "api/engine/fake_embedder.h"
#include "gtest/gtest.h"

namespace neodb::engine {
namespace {

using ::absl::StatusCode;

absl::Time In(absl::Duration d) { return absl::Now() + d; }

// A FakeEmbedder whose Embed calls block until Open(): the tests hold the
// batcher's worker busy for exactly as long as they need, so what they assert
// follows from the order of events, never from how fast this machine is.
class GatedEmbedder : public Embedder {
 public:
  GatedEmbedder(int dim, int max_tokens) : fake_(dim, max_tokens) {}

  const std::string& model_id() const override { return fake_.model_id(); }
  int dim() const override { return fake_.dim(); }
  int max_tokens() const override { return fake_.max_tokens(); }
  absl::StatusOr<int> CountTokens(std::string_view prefix, std::string_view text) const override {
    return fake_.CountTokens(prefix, text);
  }
  absl::StatusOr<std::vector<encoder::Embedding>> Embed(
      const std::vector<std::string>& texts, const encoder::EmbedOptions& options) override {
    {
      std::unique_lock<std::mutex> lock(mu_);
      ++entered_;
      cv_.notify_all();
      cv_.wait(lock, [&] { return open_; });
    }
    return fake_.Embed(texts, options);
  }

  // Lets every waiting and future Embed call through.
  void Open() {
    std::lock_guard<std::mutex> lock(mu_);
    open_ = true;
    cv_.notify_all();
  }
  // Blocks until `n` Embed calls have started (the worker is then inside one).
  void WaitEntered(int n) {
    std::unique_lock<std::mutex> lock(mu_);
    cv_.wait(lock, [&] { return entered_ >= n; });
  }
  int64_t calls() const { return fake_.calls(); }

 private:
  FakeEmbedder fake_;
  std::mutex mu_;
  std::condition_variable cv_;
  bool open_ = false;
  int entered_ = 0;
};

// Polls `done` (a condition on the batcher's counters, which have no waiter of
// their own); no deadline: the test runner's timeout bounds a hang.
template <typename F>
void WaitUntil(F done) {
  while (!done()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
}

TEST(EmbedBatcherTest, ReturnsOneVectorPerTextInOrder) {
  FakeEmbedder fake(8, 64);
  EmbedBatcher b(&fake, {});
  auto r = b.Embed({"a b", "c", "a b"}, {}, In(absl::Seconds(10)));
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_EQ(r->size(), 3u);
  EXPECT_EQ((*r)[0].vector, (*r)[2].vector);
  EXPECT_NE((*r)[0].vector, (*r)[1].vector);
  EXPECT_EQ((*r)[0].num_tokens, 4);
  // Same answer as the embedder called directly.
  auto direct = fake.Embed({"c"}, {});
  ASSERT_TRUE(direct.ok());
  EXPECT_EQ((*direct)[0].vector, (*r)[1].vector);
}

TEST(EmbedBatcherTest, ConcurrentRequestsShareBatches) {
  GatedEmbedder gated(8, 64);
  EmbedBatcherOptions o;
  o.max_wait = absl::ZeroDuration();
  EmbedBatcher b(&gated, o);
  std::vector<std::thread> threads;
  std::atomic<int> ok{0};
  auto embed_one = [&](int i) {
    auto r = b.Embed({"text " + std::to_string(i)}, {}, In(absl::Seconds(60)));
    if (r.ok() && r->size() == 1) ++ok;
  };
  // The first request occupies the worker; the other 15 queue behind it.
  threads.emplace_back(embed_one, 0);
  gated.WaitEntered(1);
  for (int i = 1; i < 16; ++i) threads.emplace_back(embed_one, i);
  WaitUntil([&] { return b.stats().queued_texts == 15; });
  gated.Open();
  for (auto& t : threads) t.join();
  EXPECT_EQ(ok, 16);
  // The 15 queued requests fit one batch: two calls in all.
  EXPECT_EQ(gated.calls(), 2);
  EXPECT_EQ(b.stats().embedded_texts, 16);
}

TEST(EmbedBatcherTest, BatchTokenBudgetIsRespected) {
  FakeEmbedder fake(4, 64);
  fake.set_delay(absl::Milliseconds(30));
  EmbedBatcherOptions o;
  o.max_batch_tokens = 10;  // each request below is 5 tokens: two per batch
  o.max_wait = absl::Milliseconds(50);
  EmbedBatcher b(&fake, o);
  std::vector<std::thread> threads;
  for (int i = 0; i < 6; ++i) {
    threads.emplace_back([&] {
      auto r = b.Embed({"one two three"}, {}, In(absl::Seconds(10)));
      EXPECT_TRUE(r.ok()) << r.status();
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_GE(fake.calls(), 3);
}

TEST(EmbedBatcherTest, FullQueueAnswersResourceExhaustedAtOnce) {
  GatedEmbedder gated(4, 64);
  EmbedBatcherOptions o;
  o.max_queue_texts = 4;
  o.max_wait = absl::ZeroDuration();
  EmbedBatcher b(&gated, o);
  // Occupy the worker, then fill the queue.
  std::vector<std::thread> threads;
  threads.emplace_back([&] { (void)b.Embed({"busy"}, {}, In(absl::Seconds(60))); });
  gated.WaitEntered(1);
  threads.emplace_back([&] { (void)b.Embed({"a", "b", "c", "d"}, {}, In(absl::Seconds(60))); });
  WaitUntil([&] { return b.stats().queued_texts == 4; });
  // The worker stays blocked until after this call returns, so an answer at
  // all proves the call did not wait for room in the queue.
  auto r = b.Embed({"one more"}, {}, In(absl::Seconds(60)));
  EXPECT_EQ(r.status().code(), StatusCode::kResourceExhausted) << r.status();
  EXPECT_EQ(b.stats().rejected, 1);
  gated.Open();
  for (auto& t : threads) t.join();
}

TEST(EmbedBatcherTest, DeadlineExceededWhileWaitingAndExpiredWorkIsSkipped) {
  GatedEmbedder gated(4, 64);
  EmbedBatcherOptions o;
  o.max_wait = absl::ZeroDuration();
  EmbedBatcher b(&gated, o);
  std::thread busy([&] { (void)b.Embed({"busy"}, {}, In(absl::Seconds(60))); });
  gated.WaitEntered(1);
  // The worker is held until "late" has given up waiting.
  auto r = b.Embed({"late"}, {}, In(absl::Milliseconds(20)));
  EXPECT_EQ(r.status().code(), StatusCode::kDeadlineExceeded) << r.status();
  gated.Open();
  busy.join();
  // The worker then picks up (and skips) the expired request.
  WaitUntil([&] { return b.stats().expired == 1; });
  EXPECT_EQ(gated.calls(), 1);  // "late" was never embedded
  EXPECT_EQ(b.stats().embedded_texts, 1);
}

TEST(EmbedBatcherTest, PastDeadlineIsRefusedWithoutQueueing) {
  FakeEmbedder fake(4, 64);
  EmbedBatcher b(&fake, {});
  auto r = b.Embed({"x"}, {}, absl::Now() - absl::Seconds(1));
  EXPECT_EQ(r.status().code(), StatusCode::kDeadlineExceeded);
  EXPECT_EQ(fake.calls(), 0);
}

TEST(EmbedBatcherTest, OneBadRequestDoesNotFailItsBatchNeighbours) {
  GatedEmbedder gated(4, 6);  // at most 6 tokens
  EmbedBatcherOptions o;
  o.max_wait = absl::ZeroDuration();
  EmbedBatcher b(&gated, o);
  std::thread busy([&] { (void)b.Embed({"busy"}, {}, In(absl::Seconds(60))); });
  gated.WaitEntered(1);
  absl::StatusOr<std::vector<encoder::Embedding>> good, bad;
  std::thread t1([&] { good = b.Embed({"short"}, {}, In(absl::Seconds(60))); });
  std::thread t2(
      [&] { bad = b.Embed({"one two three four five six seven"}, {}, In(absl::Seconds(60))); });
  // Both queue behind "busy" and so go to the encoder as one batch.
  WaitUntil([&] { return b.stats().queued_texts == 2; });
  gated.Open();
  t1.join();
  t2.join();
  busy.join();
  EXPECT_TRUE(good.ok()) << good.status();
  EXPECT_EQ(bad.status().code(), StatusCode::kInvalidArgument);
}

TEST(EmbedBatcherTest, DifferentOptionsAreNotMixed) {
  FakeEmbedder fake(4, 64);
  EmbedBatcher b(&fake, {});
  encoder::EmbedOptions cls;
  cls.pooling = encoder::Pooling::kCls;
  auto a = b.Embed({"x"}, {}, In(absl::Seconds(10)));
  auto c = b.Embed({"x"}, cls, In(absl::Seconds(10)));
  ASSERT_TRUE(a.ok());
  ASSERT_TRUE(c.ok());
  EXPECT_NE((*a)[0].vector, (*c)[0].vector);
}

}  // namespace
}  // namespace neodb::engine
