// EmbedBatcher: batching, bounded queue, deadlines, error isolation.
#include "api/engine/embed_batcher.h"

#include <atomic>
#include <thread>
#include <vector>

#include "api/engine/fake_embedder.h"
#include "gtest/gtest.h"

namespace neodb::engine {
namespace {

using ::absl::StatusCode;

absl::Time In(absl::Duration d) { return absl::Now() + d; }

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
  FakeEmbedder fake(8, 64);
  fake.set_delay(absl::Milliseconds(20));
  EmbedBatcherOptions o;
  o.max_wait = absl::Milliseconds(5);
  EmbedBatcher b(&fake, o);
  std::vector<std::thread> threads;
  std::atomic<int> ok{0};
  for (int i = 0; i < 16; ++i) {
    threads.emplace_back([&, i] {
      auto r = b.Embed({"text " + std::to_string(i)}, {}, In(absl::Seconds(10)));
      if (r.ok() && r->size() == 1) ++ok;
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(ok, 16);
  // While one batch runs (20 ms) the others queue up and go together.
  EXPECT_LT(fake.calls(), 16);
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
  FakeEmbedder fake(4, 64);
  fake.set_delay(absl::Milliseconds(300));
  EmbedBatcherOptions o;
  o.max_queue_texts = 4;
  o.max_wait = absl::ZeroDuration();
  EmbedBatcher b(&fake, o);
  // Occupy the worker, then fill the queue.
  std::vector<std::thread> threads;
  threads.emplace_back([&] { (void)b.Embed({"busy"}, {}, In(absl::Seconds(10))); });
  while (fake.calls() == 0) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  threads.emplace_back([&] { (void)b.Embed({"a", "b", "c", "d"}, {}, In(absl::Seconds(10))); });
  while (b.stats().queued_texts < 4) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  const absl::Time start = absl::Now();
  auto r = b.Embed({"one more"}, {}, In(absl::Seconds(10)));
  EXPECT_EQ(r.status().code(), StatusCode::kResourceExhausted) << r.status();
  EXPECT_LT(absl::Now() - start, absl::Milliseconds(100));  // no waiting
  EXPECT_EQ(b.stats().rejected, 1);
  for (auto& t : threads) t.join();
}

TEST(EmbedBatcherTest, DeadlineExceededWhileWaitingAndExpiredWorkIsSkipped) {
  FakeEmbedder fake(4, 64);
  fake.set_delay(absl::Milliseconds(200));
  EmbedBatcherOptions o;
  o.max_wait = absl::ZeroDuration();
  EmbedBatcher b(&fake, o);
  std::thread busy([&] { (void)b.Embed({"busy"}, {}, In(absl::Seconds(10))); });
  while (fake.calls() == 0) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  auto r = b.Embed({"late"}, {}, In(absl::Milliseconds(20)));
  EXPECT_EQ(r.status().code(), StatusCode::kDeadlineExceeded) << r.status();
  busy.join();
  // Give the worker time to pick up (and skip) the expired request.
  for (int i = 0; i < 100 && b.stats().expired == 0; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  EXPECT_EQ(b.stats().expired, 1);
  EXPECT_EQ(fake.calls(), 1);  // "late" was never embedded
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
  FakeEmbedder fake(4, 6);  // at most 6 tokens
  fake.set_delay(absl::Milliseconds(50));
  EmbedBatcherOptions o;
  o.max_wait = absl::Milliseconds(20);
  EmbedBatcher b(&fake, o);
  std::thread busy([&] { (void)b.Embed({"busy"}, {}, In(absl::Seconds(10))); });
  while (fake.calls() == 0) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  absl::StatusOr<std::vector<encoder::Embedding>> good, bad;
  std::thread t1([&] { good = b.Embed({"short"}, {}, In(absl::Seconds(10))); });
  std::thread t2(
      [&] { bad = b.Embed({"one two three four five six seven"}, {}, In(absl::Seconds(10))); });
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
