#pragma once
// EmbedBatcher: dynamic, fair, cancellable batching in front of one Embedder.
//
// A caller's texts are framed (tokenized, chunked) on the caller's thread,
// then queued as a request of sequences. One worker thread runs the encoder
// in passes of at most `max_batch_tokens` tokens. Each pass takes at most
// one WORK ITEM from each waiting request, visiting requests round-robin: a
// work item is the request's next sequences (chunks) that it has earned by
// deficit round robin over tokens (each waiting request earns an equal share
// of every pass), within what is left of the pass's token budget (a pass
// always takes at least one sequence). So requests share the encoder by
// tokens, whatever their sequence lengths. A 10 MB chunked document becomes
// hundreds of passes, and a short request that arrives meanwhile rides in
// the next pass instead of waiting for the whole document; requests with
// the same pooling share passes.
//
// Two lanes: queries (what a user waits on: NearText, the texts of a Query)
// and bulk (documents, reindex, verify, the Embed RPC). A pass serves one
// lane. When both have work the lanes take turns, so a query waits for at
// most the bulk pass in flight and one more, and bulk is never starved by a
// stream of queries. While queries come (one within the last second), a bulk
// pass is sized so it holds the encoder for about `max_bulk_pass` (from the
// encoder's measured token rate), which bounds what a query waits for; with
// no query about, for ten times that (an import runs at nearly the speed of
// full passes, and the first query after a quiet spell waits a bounded
// time). A query pass is as large as the queries waiting.
//
// Bounds: at most `max_queue_texts` texts wait at any time; a request that
// would exceed that is answered RESOURCE_EXHAUSTED at once, so memory never
// grows with load. (How many tokens one request may hold is the caller's
// bound: Database checks its per-request token budget before calling.)
//
// Deadlines and cancellation: a caller waits until its deadline at most and
// then gets DEADLINE_EXCEEDED; when its CancelCheck turns true it gets
// CANCELLED within kCancelPoll. Either way the worker drops the request's
// remaining sequences before its next pass (they are counted in
// EmbedBatcherStats::skipped_sequences), so a cancelled request holds the
// encoder for at most the one work item already running.
//
// Thread-safety: Embed may be called from any number of threads. The
// Embedder's Pool is used from the worker thread only. The destructor stops
// the worker; REQUIRES: no Embed call is in progress then (the server is
// shut down before the database lets its batcher go).

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "absl/time/time.h"
#include "engine/embedder.h"

namespace neodb::engine {

// True once the caller no longer wants the answer (e.g. the gRPC client
// cancelled). Called with the batcher's lock held, from the caller's and the
// worker's threads, only while the caller is still inside Embed; must be
// cheap and must not block. Empty: never cancelled.
using CancelCheck = std::function<bool()>;

// The queue a request joins (see the file comment).
enum class EmbedLane { kQuery = 0, kBulk = 1 };

struct EmbedBatcherOptions {
  // Texts waiting (queued, not finished). Default: 4096.
  int64_t max_queue_texts = 4096;
  // Tokens in one encoder pass, and so the most one work item holds the
  // encoder for. A single sequence is never split (it is at most the model's
  // max_length). Default: 8192.
  int64_t max_batch_tokens = 8192;
  // Longest time the worker holds a pass that is not full for callers that
  // are already inside Embed, framing their texts. It never waits when none
  // is: a lone query runs at once, and requests that arrive while a pass
  // runs queue and share the next pass anyway. Default: 2 ms.
  absl::Duration max_wait = absl::Milliseconds(2);
  // About how long one bulk pass may hold the encoder while queries come:
  // the worker caps a bulk pass at (measured bulk tokens per second) x
  // max_bulk_pass tokens, at least one sequence and at most
  // max_batch_tokens, when a query arrived within kQueryRecency (else at
  // kIdlePassFactor times that). A query
  // that arrives while a bulk pass runs waits for that pass, so this bounds
  // the added latency of queries under ingest; smaller passes cost some
  // encoder throughput on a CPU (bench/README.md). Zero: no cap beyond
  // max_batch_tokens. Where passes are fast (a GPU) the cap is
  // max_batch_tokens anyway. Default: 25 ms.
  absl::Duration max_bulk_pass = absl::Milliseconds(25);
  // Reads the time around encoder passes (their duration sets the bulk rate
  // and encoder_seconds) and when queries arrive. Empty: absl::Now. Tests
  // give a fake clock so the pass sizes they check do not depend on this
  // machine's speed. (Deadlines always use absl::Now.)
  std::function<absl::Time()> pass_clock;
};

struct EmbedBatcherStats {
  int64_t queued_texts = 0;     // waiting now
  int64_t embedded_texts = 0;   // total
  int64_t embedded_tokens = 0;  // total
  int64_t batches = 0;          // encoder passes
  int64_t query_batches = 0;    // of which passes of the query lane
  int64_t work_items = 0;       // request slices run (a pass holds one or more)
  int64_t rejected = 0;         // RESOURCE_EXHAUSTED answers
  int64_t expired = 0;          // requests dropped because their deadline passed
  int64_t cancelled = 0;        // requests dropped because the caller cancelled
  // Sequences (chunks) of expired or cancelled requests that were never run.
  int64_t skipped_sequences = 0;
  double encoder_seconds = 0;  // time spent inside Embedder::Pool
  // The token cap of the next bulk pass (see max_bulk_pass).
  int64_t bulk_pass_tokens = 0;
};

class EmbedBatcher {
 public:
  // How often a waiting caller looks at its CancelCheck.
  static constexpr absl::Duration kCancelPoll = absl::Milliseconds(20);
  // Bulk passes are capped at max_bulk_pass while a query came this
  // recently, and at kIdlePassFactor times that otherwise.
  static constexpr absl::Duration kQueryRecency = absl::Seconds(1);
  static constexpr int kIdlePassFactor = 10;

  // `embedder` is not owned and must outlive the batcher.
  EmbedBatcher(Embedder* embedder, const EmbedBatcherOptions& options);
  ~EmbedBatcher();
  EmbedBatcher(const EmbedBatcher&) = delete;
  EmbedBatcher& operator=(const EmbedBatcher&) = delete;

  // Embeds `texts` (one vector each, in order). Blocks until done, until
  // `deadline` (DEADLINE_EXCEEDED) or until `cancelled` says so (CANCELLED).
  // Framing errors (over-long text with Overflow::kError) are
  // INVALID_ARGUMENT before anything is queued. `lane`: kQuery for texts a
  // user waits on, kBulk otherwise. REQUIRES: texts non-empty.
  absl::StatusOr<std::vector<encoder::Embedding>> Embed(std::vector<std::string> texts,
                                                        const encoder::EmbedOptions& options,
                                                        absl::Time deadline,
                                                        const CancelCheck& cancelled = {},
                                                        EmbedLane lane = EmbedLane::kBulk);

  EmbedBatcherStats stats() const;
  Embedder* embedder() const { return embedder_; }

 private:
  struct Request;
  struct Slice;  // one work item: sequences [begin, end) of a request
  void WorkerLoop();
  using Ring = std::deque<std::shared_ptr<Request>>;
  // Drops requests nobody waits for any more. REQUIRES: mu_ held.
  void DropDead();
  // The lane the next pass serves. REQUIRES: mu_ held, some ring non-empty.
  EmbedLane NextLane() const;
  // Token cap of a bulk pass (see max_bulk_pass). REQUIRES: mu_ held.
  int64_t BulkPassTokens() const;
  // The pass clock (EmbedBatcherOptions::pass_clock).
  absl::Time Now() const;
  // Takes the next pass's work items from one lane, round-robin.
  // REQUIRES: mu_ held.
  std::vector<Slice> TakeBatch(std::unique_lock<std::mutex>& lock);
  // Runs one pass (lock released meanwhile) and hands out the results.
  void RunBatch(std::vector<Slice> batch, std::unique_lock<std::mutex>& lock);
  // Ends `r` with `result`. REQUIRES: mu_ held.
  void Finish(Request& r, absl::StatusOr<std::vector<encoder::Embedding>> result);

  Embedder* const embedder_;
  const EmbedBatcherOptions options_;

  mutable std::mutex mu_;
  std::condition_variable work_cv_;  // worker waits for requests
  std::condition_variable done_cv_;  // callers wait for their results
  // Per lane: requests with sequences not yet taken, front = next served.
  Ring rings_[2];
  Ring& ring(EmbedLane lane) { return rings_[static_cast<int>(lane)]; }
  bool rings_empty() const { return rings_[0].empty() && rings_[1].empty(); }
  int64_t queued_texts_ = 0;
  // Per lane: callers inside Embed that have not queued yet (framing their
  // texts): the only requests a pass that is not full waits for.
  int arriving_[2] = {0, 0};
  EmbedLane last_lane_ = EmbedLane::kBulk;
  uint64_t passes_taken_ = 0;  // TakeBatch calls that chose a lane
  // Bulk tokens per second of the encoder, averaged over recent bulk passes;
  // 0 until the first one.
  double bulk_tokens_per_second_ = 0;
  // When the last query was queued (pass clock).
  absl::Time last_query_ = absl::InfinitePast();
  bool stop_ = false;
  EmbedBatcherStats stats_;
  std::thread worker_;
};

}  // namespace neodb::engine
