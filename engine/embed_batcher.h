#pragma once
// EmbedBatcher: dynamic, fair, cancellable batching in front of one Embedder.
//
// A caller's texts are framed (tokenized, chunked) on the caller's thread,
// then queued as a request of sequences. One worker thread runs the encoder
// in passes of at most `max_batch_tokens` tokens. Each pass takes at most
// one WORK ITEM from each waiting request, visiting requests round-robin: a
// work item is the request's next sequences (chunks), up to what is left of
// the pass's token budget (at least one sequence). So a 10 MB chunked
// document becomes hundreds of passes, and a short query that arrives
// meanwhile rides in the next pass instead of waiting for the whole
// document; requests with the same pooling share passes.
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
};

struct EmbedBatcherStats {
  int64_t queued_texts = 0;     // waiting now
  int64_t embedded_texts = 0;   // total
  int64_t embedded_tokens = 0;  // total
  int64_t batches = 0;          // encoder passes
  int64_t work_items = 0;       // request slices run (a pass holds one or more)
  int64_t rejected = 0;         // RESOURCE_EXHAUSTED answers
  int64_t expired = 0;          // requests dropped because their deadline passed
  int64_t cancelled = 0;        // requests dropped because the caller cancelled
  // Sequences (chunks) of expired or cancelled requests that were never run.
  int64_t skipped_sequences = 0;
  double encoder_seconds = 0;  // time spent inside Embedder::Pool
};

class EmbedBatcher {
 public:
  // How often a waiting caller looks at its CancelCheck.
  static constexpr absl::Duration kCancelPoll = absl::Milliseconds(20);

  // `embedder` is not owned and must outlive the batcher.
  EmbedBatcher(Embedder* embedder, const EmbedBatcherOptions& options);
  ~EmbedBatcher();
  EmbedBatcher(const EmbedBatcher&) = delete;
  EmbedBatcher& operator=(const EmbedBatcher&) = delete;

  // Embeds `texts` (one vector each, in order). Blocks until done, until
  // `deadline` (DEADLINE_EXCEEDED) or until `cancelled` says so (CANCELLED).
  // Framing errors (over-long text with Overflow::kError) are
  // INVALID_ARGUMENT before anything is queued. REQUIRES: texts non-empty.
  absl::StatusOr<std::vector<encoder::Embedding>> Embed(std::vector<std::string> texts,
                                                        const encoder::EmbedOptions& options,
                                                        absl::Time deadline,
                                                        const CancelCheck& cancelled = {});

  EmbedBatcherStats stats() const;
  Embedder* embedder() const { return embedder_; }

 private:
  struct Request;
  struct Slice;  // one work item: sequences [begin, end) of a request
  void WorkerLoop();
  // Drops requests nobody waits for any more. REQUIRES: mu_ held.
  void DropDead();
  // Takes the next pass's work items, round-robin. REQUIRES: mu_ held.
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
  // Requests with sequences not yet taken, front = next to be served.
  std::deque<std::shared_ptr<Request>> ring_;
  int64_t queued_texts_ = 0;
  // Callers inside Embed that have not queued yet (framing their texts): the
  // only requests a pass that is not full waits for.
  int arriving_ = 0;
  bool stop_ = false;
  EmbedBatcherStats stats_;
  std::thread worker_;
};

}  // namespace neodb::engine
