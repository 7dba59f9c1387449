#pragma once
// EmbedBatcher: dynamic batching in front of one Embedder. Concurrent callers
// submit texts; one worker thread gathers queued requests with the same
// EmbedOptions into a batch of at most `max_batch_tokens` tokens, waiting at
// most `max_wait` for a batch to fill, and runs the encoder once for it.
//
// Bounds: at most `max_queue_texts` texts wait at any time; a request that
// would exceed that is answered RESOURCE_EXHAUSTED at once, so memory never
// grows with load. Deadlines: a caller waits until its deadline at most and
// then gets DEADLINE_EXCEEDED; work whose deadline passed before the worker
// reached it is skipped, never embedded.
//
// Thread-safety: Embed may be called from any number of threads. The
// Embedder is used from the worker thread only. The destructor stops the
// worker; REQUIRES: no Embed call is in progress then (the server is shut
// down before the database lets its batcher go).

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "absl/time/time.h"
#include "api/engine/embedder.h"

namespace neodb::engine {

struct EmbedBatcherOptions {
  // Texts waiting (queued, not yet taken by the worker). Default: 4096.
  int64_t max_queue_texts = 4096;
  // Token budget of one batch (estimated with Embedder::CountTokens). A single
  // request larger than this runs alone. Default: 8192.
  int64_t max_batch_tokens = 8192;
  // Longest time the worker waits for more requests when a batch is not full.
  // Default: 2 ms.
  absl::Duration max_wait = absl::Milliseconds(2);
};

struct EmbedBatcherStats {
  int64_t queued_texts = 0;     // waiting now
  int64_t embedded_texts = 0;   // total
  int64_t embedded_tokens = 0;  // total
  int64_t batches = 0;
  int64_t rejected = 0;        // RESOURCE_EXHAUSTED answers
  int64_t expired = 0;         // skipped because their deadline had passed
  double encoder_seconds = 0;  // time spent inside Embedder::Embed
};

class EmbedBatcher {
 public:
  // `embedder` is not owned and must outlive the batcher.
  EmbedBatcher(Embedder* embedder, const EmbedBatcherOptions& options);
  ~EmbedBatcher();
  EmbedBatcher(const EmbedBatcher&) = delete;
  EmbedBatcher& operator=(const EmbedBatcher&) = delete;

  // Embeds `texts` (all in one batch, in order). Blocks until done or until
  // `deadline`. REQUIRES: texts non-empty.
  absl::StatusOr<std::vector<encoder::Embedding>> Embed(std::vector<std::string> texts,
                                                        const encoder::EmbedOptions& options,
                                                        absl::Time deadline);

  EmbedBatcherStats stats() const;
  Embedder* embedder() const { return embedder_; }

 private:
  struct Request;
  void WorkerLoop();
  // Takes the next batch off the queue. REQUIRES: mu_ held, queue non-empty.
  std::vector<std::shared_ptr<Request>> TakeBatch(std::unique_lock<std::mutex>& lock);

  Embedder* const embedder_;
  const EmbedBatcherOptions options_;

  mutable std::mutex mu_;
  std::condition_variable work_cv_;  // worker waits for requests
  std::condition_variable done_cv_;  // callers wait for their results
  std::deque<std::shared_ptr<Request>> queue_;
  int64_t queued_texts_ = 0;
  bool stop_ = false;
  EmbedBatcherStats stats_;
  std::thread worker_;
};

}  // namespace neodb::engine
