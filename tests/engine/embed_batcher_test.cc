// EmbedBatcher: batching, bounded queue, deadlines, error isolation.
#include "engine/embed_batcher.h"

#include <atomic>
#include <cstdlib>
#include <condition_variable>
#include <mutex>
#include <thread>
#include <vector>

#include "engine/fake_embedder.h"
#include "gtest/gtest.h"

namespace neodb::engine {
namespace {

using ::absl::StatusCode;

absl::Time In(absl::Duration d) { return absl::Now() + d; }

// A FakeEmbedder whose Pool calls (the batcher's encoder passes) block until
// let through: Open() lets every pass through, Allow(n) the next n. The tests
// hold the batcher's worker busy for exactly as long as they need, so what
// they assert follows from the order of events, never from how fast this
// machine is.
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
    return fake_.Embed(texts, options);
  }
  absl::StatusOr<encoder::FramedTexts> Frame(const std::vector<std::string>& texts,
                                             const encoder::EmbedOptions& options) const override {
    return fake_.Frame(texts, options);
  }
  absl::StatusOr<std::vector<float>> Pool(const std::vector<std::vector<int32_t>>& sequences,
                                          encoder::Pooling pooling) override {
    {
      std::unique_lock<std::mutex> lock(mu_);
      ++entered_;
      sizes_.push_back(static_cast<int>(sequences.size()));
      std::vector<int> lengths;
      for (const auto& s : sequences) lengths.push_back(static_cast<int>(s.size()));
      lengths_.push_back(std::move(lengths));
      cv_.notify_all();
      cv_.wait(lock, [&] { return open_ || permits_ > 0; });
      if (!open_) --permits_;
    }
    return fake_.Pool(sequences, pooling);
  }

  // Lets every waiting and future Pool call through.
  void Open() {
    std::lock_guard<std::mutex> lock(mu_);
    open_ = true;
    cv_.notify_all();
  }
  // Lets the next `n` Pool calls through.
  void Allow(int n) {
    std::lock_guard<std::mutex> lock(mu_);
    permits_ += n;
    cv_.notify_all();
  }
  // Blocks until `n` Pool calls have started (the worker is then inside one).
  void WaitEntered(int n) {
    std::unique_lock<std::mutex> lock(mu_);
    cv_.wait(lock, [&] { return entered_ >= n; });
  }
  int64_t calls() const { return fake_.calls(); }
  // Sequences of each Pool call so far.
  std::vector<int> sizes() {
    std::lock_guard<std::mutex> lock(mu_);
    return sizes_;
  }
  // The token length of each sequence of each Pool call so far.
  std::vector<std::vector<int>> lengths() {
    std::lock_guard<std::mutex> lock(mu_);
    return lengths_;
  }

 private:
  FakeEmbedder fake_;
  std::mutex mu_;
  std::condition_variable cv_;
  bool open_ = false;
  int permits_ = 0;
  int entered_ = 0;
  std::vector<int> sizes_;
  std::vector<std::vector<int>> lengths_;
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

// The tests that check how passes are made up hold the worker for as long as
// they like, which would make the measured bulk rate (and so the bulk pass
// cap, max_bulk_pass) depend on the test's pace: they turn the cap off.
EmbedBatcherOptions Uncapped() {
  EmbedBatcherOptions o;
  o.max_wait = absl::ZeroDuration();
  o.max_bulk_pass = absl::ZeroDuration();
  return o;
}

TEST(EmbedBatcherTest, ConcurrentRequestsShareBatches) {
  GatedEmbedder gated(8, 64);
  EmbedBatcherOptions o = Uncapped();
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

// A FakeEmbedder whose Frame blocks on the text "late" until Release(): a
// caller held inside Embed before it queues.
class SlowFrameEmbedder : public FakeEmbedder {
 public:
  using FakeEmbedder::FakeEmbedder;
  absl::StatusOr<encoder::FramedTexts> Frame(const std::vector<std::string>& texts,
                                             const encoder::EmbedOptions& options) const override {
    if (texts[0] == "late") {
      std::unique_lock<std::mutex> lock(mu_);
      ++framing_;
      cv_.notify_all();
      cv_.wait(lock, [&] { return released_; });
    }
    return FakeEmbedder::Frame(texts, options);
  }
  void WaitFraming() {
    std::unique_lock<std::mutex> lock(mu_);
    cv_.wait(lock, [&] { return framing_ > 0; });
  }
  void Release() {
    std::lock_guard<std::mutex> lock(mu_);
    released_ = true;
    cv_.notify_all();
  }

 private:
  mutable std::mutex mu_;
  mutable std::condition_variable cv_;
  mutable int framing_ = 0;
  bool released_ = false;
};

TEST(EmbedBatcherTest, LoneRequestDoesNotWaitForABatch) {
  FakeEmbedder fake(4, 64);
  EmbedBatcherOptions o;
  o.max_wait = absl::Seconds(60);  // would be the hand-off of every lone query
  EmbedBatcher b(&fake, o);
  for (int i = 0; i < 3; ++i) {
    const absl::Time start = absl::Now();
    auto r = b.Embed({"alone"}, {}, In(absl::Seconds(120)));
    ASSERT_TRUE(r.ok()) << r.status();
    EXPECT_LT(absl::Now() - start, absl::Seconds(30));
  }
  EXPECT_EQ(fake.calls(), 3);
}

TEST(EmbedBatcherTest, PassWaitsForACallerThatIsFramingItsTexts) {
  SlowFrameEmbedder fake(4, 64);
  EmbedBatcherOptions o;
  o.max_wait = absl::Seconds(60);
  EmbedBatcher b(&fake, o);
  // "late" enters Embed and is held in Frame; "early" queues meanwhile. The
  // worker's pass waits for "late" (it is on its way) instead of running
  // "early" alone: one pass of two texts.
  std::thread late([&] { EXPECT_TRUE(b.Embed({"late"}, {}, In(absl::Seconds(120))).ok()); });
  fake.WaitFraming();
  std::thread early([&] { EXPECT_TRUE(b.Embed({"early"}, {}, In(absl::Seconds(120))).ok()); });
  WaitUntil([&] { return b.stats().work_items == 1; });  // "early" taken, pass held
  fake.Release();
  late.join();
  early.join();
  EXPECT_EQ(fake.calls(), 1);
  EXPECT_EQ(b.stats().batches, 1);
  EXPECT_EQ(b.stats().embedded_texts, 2);
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
  // The over-long text fails while framing, before it is queued, on its own.
  bad = b.Embed({"one two three four five six seven"}, {}, In(absl::Seconds(60)));
  WaitUntil([&] { return b.stats().queued_texts == 1; });
  gated.Open();
  t1.join();
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

encoder::EmbedOptions Chunked() {
  encoder::EmbedOptions o;
  o.overflow = encoder::Overflow::kChunk;
  return o;
}

std::string WordsText(int n, const std::string& stem) {
  std::string t;
  for (int i = 0; i < n; ++i) t += stem + std::to_string(i) + " ";
  return t;
}

// max_tokens 6: a window holds 4 words, so 40 words are 10 sequences of 6
// tokens; max_batch_tokens 6: one sequence per pass. Every pass is one work
// item the test lets through by hand.
TEST(EmbedBatcherTest, LongRequestIsSplitAndShortRequestsOvertakeIt) {
  GatedEmbedder gated(8, 6);
  EmbedBatcherOptions o = Uncapped();
  o.max_batch_tokens = 6;
  EmbedBatcher b(&gated, o);
  const std::string big_text = WordsText(40, "w");
  absl::StatusOr<std::vector<encoder::Embedding>> big, small;
  std::thread big_thread([&] { big = b.Embed({big_text}, Chunked(), In(absl::Seconds(60))); });
  gated.WaitEntered(1);  // the big request's first item is running
  std::thread small_thread([&] { small = b.Embed({"q"}, {}, In(absl::Seconds(60))); });
  WaitUntil([&] { return b.stats().queued_texts == 2; });  // big (9 items left) + small
  // Two passes: the big request's first item, then the short request, which
  // goes ahead of the rest of the big one.
  gated.Allow(2);
  // Only two passes can finish, so the short request is answered with the
  // big one's 2nd..10th items still to run.
  small_thread.join();
  ASSERT_TRUE(small.ok()) << small.status();
  EXPECT_EQ(gated.calls(), 2);
  EXPECT_EQ(b.stats().embedded_texts, 1);  // the big request is not done
  gated.Open();
  big_thread.join();
  ASSERT_TRUE(big.ok()) << big.status();
  EXPECT_EQ(gated.calls(), 11);  // 10 items of the big request, 1 short
  EXPECT_EQ((*big)[0].num_chunks, 10);
  EXPECT_EQ((*big)[0].num_tokens, 60);
  // Splitting into passes changes nothing: same vector as one Embed call.
  FakeEmbedder direct(8, 6);
  auto whole = direct.Embed({big_text}, Chunked());
  ASSERT_TRUE(whole.ok());
  EXPECT_EQ((*whole)[0].vector, (*big)[0].vector);
}

TEST(EmbedBatcherTest, RequestsTakeTurnsOneWorkItemEach) {
  GatedEmbedder gated(8, 6);
  EmbedBatcherOptions o = Uncapped();
  o.max_batch_tokens = 12;  // two sequences per pass
  EmbedBatcher b(&gated, o);
  std::thread busy([&] { (void)b.Embed({"busy"}, {}, In(absl::Seconds(60))); });
  gated.WaitEntered(1);
  // Two long requests (4 sequences each) queue behind "busy".
  absl::StatusOr<std::vector<encoder::Embedding>> x, y;
  std::thread tx([&] { x = b.Embed({WordsText(16, "x")}, Chunked(), In(absl::Seconds(60))); });
  WaitUntil([&] { return b.stats().queued_texts == 1; });
  std::thread ty([&] { y = b.Embed({WordsText(16, "y")}, Chunked(), In(absl::Seconds(60))); });
  WaitUntil([&] { return b.stats().queued_texts == 2; });
  gated.Open();
  busy.join();
  tx.join();
  ty.join();
  ASSERT_TRUE(x.ok() && y.ok());
  // Each pass holds one sequence of each (not two of the first to arrive).
  EXPECT_EQ(gated.sizes(), (std::vector<int>{1, 2, 2, 2, 2}));
  EXPECT_EQ(b.stats().work_items, 9);
}

TEST(EmbedBatcherTest, CancelledRequestStopsWithinOneWorkItem) {
  GatedEmbedder gated(8, 6);
  EmbedBatcherOptions o;
  o.max_batch_tokens = 6;
  o.max_wait = absl::ZeroDuration();
  EmbedBatcher b(&gated, o);
  std::atomic<bool> cancel{false};
  absl::StatusOr<std::vector<encoder::Embedding>> r;
  std::thread t([&] {
    r = b.Embed({WordsText(40, "w")}, Chunked(), In(absl::Seconds(60)),
                [&] { return cancel.load(); });
  });
  gated.WaitEntered(1);  // item 1 of 10 is running
  cancel = true;
  t.join();  // returns while the encoder is still held: it does not wait for it
  EXPECT_EQ(r.status().code(), StatusCode::kCancelled) << r.status();
  gated.Open();
  WaitUntil([&] { return b.stats().cancelled == 1; });
  EXPECT_EQ(b.stats().skipped_sequences, 9);
  EXPECT_EQ(gated.calls(), 1);  // nothing after the item in flight
  // The batcher serves the next request normally.
  auto next = b.Embed({"after"}, {}, In(absl::Seconds(60)));
  EXPECT_TRUE(next.ok()) << next.status();
}

TEST(EmbedBatcherTest, QueryRunsAloneAheadOfQueuedBulkWork) {
  GatedEmbedder gated(8, 6);
  EmbedBatcherOptions o = Uncapped();
  o.max_batch_tokens = 60;  // ten sequences per pass
  EmbedBatcher b(&gated, o);
  std::thread busy([&] { (void)b.Embed({"busy"}, {}, In(absl::Seconds(60))); });
  gated.WaitEntered(1);
  // Two documents of 10 sequences each queue, then a query.
  absl::StatusOr<std::vector<encoder::Embedding>> x, y, q;
  std::thread tx([&] { x = b.Embed({WordsText(40, "x")}, Chunked(), In(absl::Seconds(60))); });
  std::thread ty([&] { y = b.Embed({WordsText(40, "y")}, Chunked(), In(absl::Seconds(60))); });
  WaitUntil([&] { return b.stats().queued_texts == 2; });
  std::thread tq([&] {
    q = b.Embed({"query"}, {}, In(absl::Seconds(60)), {}, EmbedLane::kQuery);
  });
  WaitUntil([&] { return b.stats().queued_texts == 3; });
  // The pass in flight, then the query's own pass: one sequence, no document
  // rides with it (it would have to wait for their tokens).
  gated.Allow(2);
  tq.join();
  ASSERT_TRUE(q.ok()) << q.status();
  gated.WaitEntered(3);  // the documents' first pass, held
  EXPECT_EQ(gated.sizes(), (std::vector<int>{1, 1, 10}));
  EXPECT_EQ(b.stats().query_batches, 1);
  EXPECT_EQ(b.stats().embedded_texts, 2);  // "busy" and the query; no document
  gated.Open();
  busy.join();
  tx.join();
  ty.join();
  ASSERT_TRUE(x.ok() && y.ok());
  // The documents then share passes as before: five sequences each a pass.
  EXPECT_EQ(gated.sizes(), (std::vector<int>{1, 1, 10, 10}));
}

TEST(EmbedBatcherTest, LanesTakeTurnsWhenBothWait) {
  GatedEmbedder gated(8, 6);
  EmbedBatcherOptions o = Uncapped();
  o.max_batch_tokens = 12;  // two sequences per pass
  EmbedBatcher b(&gated, o);
  auto query = [&](const std::string& text) {
    return b.Embed({text}, {}, In(absl::Seconds(60)), {}, EmbedLane::kQuery);
  };
  std::thread first([&] { EXPECT_TRUE(query("first").ok()); });
  gated.WaitEntered(1);  // a query pass is running
  absl::StatusOr<std::vector<encoder::Embedding>> doc, second;
  std::thread td([&] { doc = b.Embed({WordsText(16, "d")}, Chunked(), In(absl::Seconds(60))); });
  WaitUntil([&] { return b.stats().queued_texts == 1; });
  std::thread ts([&] { second = query("second"); });
  WaitUntil([&] { return b.stats().queued_texts == 2; });
  // After a query pass with both lanes waiting, the document gets a pass
  // (queries cannot starve it), then the waiting query.
  gated.Allow(2);
  first.join();
  WaitUntil([&] { return gated.sizes().size() == 3; });  // the third pass has started
  EXPECT_EQ(gated.sizes(), (std::vector<int>{1, 2, 1}));
  gated.Allow(1);
  ts.join();
  ASSERT_TRUE(second.ok()) << second.status();
  EXPECT_EQ(b.stats().embedded_texts, 2);  // the two queries; the document is not done
  gated.Open();
  td.join();
  ASSERT_TRUE(doc.ok()) << doc.status();
  EXPECT_EQ(gated.sizes(), (std::vector<int>{1, 2, 1, 2}));
  EXPECT_EQ(b.stats().query_batches, 2);
}

// A FakeEmbedder whose passes take one (fake) millisecond per token: the
// batcher's pass clock reads `clock`, which Pool advances.
class MillisecondPerTokenEmbedder : public FakeEmbedder {
 public:
  using FakeEmbedder::FakeEmbedder;
  absl::StatusOr<std::vector<float>> Pool(const std::vector<std::vector<int32_t>>& sequences,
                                          encoder::Pooling pooling) override {
    std::lock_guard<std::mutex> lock(mu_);
    int64_t tokens = 0;
    for (const auto& s : sequences) tokens += static_cast<int64_t>(s.size());
    now_ += absl::Milliseconds(tokens);
    sizes_.push_back(static_cast<int>(sequences.size()));
    return FakeEmbedder::Pool(sequences, pooling);
  }
  absl::Time Now() {
    std::lock_guard<std::mutex> lock(mu_);
    return now_;
  }
  std::vector<int> sizes() {
    std::lock_guard<std::mutex> lock(mu_);
    return sizes_;
  }

 private:
  std::mutex mu_;
  absl::Time now_ = absl::UnixEpoch();
  std::vector<int> sizes_;
};

TEST(EmbedBatcherTest, BulkPassesAreSizedToMaxBulkPass) {
  MillisecondPerTokenEmbedder timed(8, 6);
  EmbedBatcherOptions o;
  o.max_wait = absl::ZeroDuration();
  o.max_batch_tokens = 240;                  // forty sequences
  o.max_bulk_pass = absl::Milliseconds(12);  // at 1000 tokens/s: 12 tokens
  o.pass_clock = [&] { return timed.Now(); };
  EmbedBatcher b(&timed, o);
  // A document of 80 sequences of 6 tokens. The first pass, not yet timed,
  // takes min(512, max_batch_tokens) tokens and measures 1000 tokens a
  // second; with no query about, a pass may then run 10 x 12 ms: 120 tokens,
  // twenty sequences.
  const std::string doc = WordsText(320, "w");
  auto r = b.Embed({doc}, Chunked(), In(absl::Seconds(60)));
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ((*r)[0].num_chunks, 80);
  EXPECT_EQ(timed.sizes(), (std::vector<int>{40, 20, 20}));
  EXPECT_EQ(b.stats().bulk_pass_tokens, 120);
  // Queries are never capped: 12 short texts in one request make one pass.
  std::vector<std::string> many(12, "q");
  auto q = b.Embed(many, {}, In(absl::Seconds(60)), {}, EmbedLane::kQuery);
  ASSERT_TRUE(q.ok()) << q.status();
  EXPECT_EQ(timed.sizes().back(), 12);
  // A query came within the last (fake) second: the same document now runs
  // in passes of 12 tokens (1000 tokens a second times 12 ms), two
  // sequences each.
  auto again = b.Embed({doc}, Chunked(), In(absl::Seconds(60)));
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_EQ((*again)[0].vector, (*r)[0].vector);
  std::vector<int> expected = {40, 20, 20, 12};
  for (int i = 0; i < 40; ++i) expected.push_back(2);
  EXPECT_EQ(timed.sizes(), expected);
  EXPECT_EQ(b.stats().bulk_pass_tokens, 12);
}

TEST(EmbedBatcherTest, SizesPassesWithoutTheClockWhenNotCapped) {
  // max_bulk_pass zero: bulk passes are max_batch_tokens, queries or not.
  MillisecondPerTokenEmbedder timed(8, 6);
  EmbedBatcherOptions o = Uncapped();
  o.max_batch_tokens = 60;
  o.pass_clock = [&] { return timed.Now(); };
  EmbedBatcher b(&timed, o);
  ASSERT_TRUE(b.Embed({"q"}, {}, In(absl::Seconds(60)), {}, EmbedLane::kQuery).ok());
  ASSERT_TRUE(b.Embed({WordsText(160, "w")}, Chunked(), In(absl::Seconds(60))).ok());
  EXPECT_EQ(timed.sizes(), (std::vector<int>{1, 10, 10, 10, 10}));
}

TEST(EmbedBatcherTest, RequestsSharePassesByTokensNotSequences) {
  GatedEmbedder gated(8, 6);
  EmbedBatcherOptions o = Uncapped();
  o.max_batch_tokens = 6;  // less than one sequence of each request
  EmbedBatcher b(&gated, o);
  std::thread busy([&] { (void)b.Embed({"busy"}, {}, In(absl::Seconds(60))); });
  gated.WaitEntered(1);
  // A document of 4 windows of 6 tokens and 8 short texts of 3 tokens: 24
  // tokens each. Shared by sequences, the document would take 6 tokens a
  // turn and the texts 3.
  absl::StatusOr<std::vector<encoder::Embedding>> doc, texts;
  std::thread td([&] { doc = b.Embed({WordsText(16, "d")}, Chunked(), In(absl::Seconds(60))); });
  WaitUntil([&] { return b.stats().queued_texts == 1; });
  std::thread tt([&] {
    texts = b.Embed({"a", "b", "c", "d", "e", "f", "g", "h"}, {}, In(absl::Seconds(60)));
  });
  WaitUntil([&] { return b.stats().queued_texts == 9; });
  gated.Open();
  busy.join();
  td.join();
  tt.join();
  ASSERT_TRUE(doc.ok() && texts.ok());
  // After every pass, the tokens each has had differ by at most one window.
  int64_t doc_tokens = 0, text_tokens = 0;
  const auto passes = gated.lengths();
  for (size_t p = 1; p < passes.size(); ++p) {  // pass 0 is "busy"
    for (int len : passes[p]) (len == 6 ? doc_tokens : text_tokens) += len;
    EXPECT_LE(std::abs(doc_tokens - text_tokens), 6) << "after pass " << p;
  }
  EXPECT_EQ(doc_tokens, 24);
  EXPECT_EQ(text_tokens, 24);
}

}  // namespace
}  // namespace neodb::engine
