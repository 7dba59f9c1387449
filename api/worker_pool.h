#pragma once
// WorkerPool: threads of our own that run the blocking work of gRPC's
// callback methods (the ingest streams' batches, ingest_reactors.h; the
// unary calls, unary_reactor.h), so none of it runs on gRPC's callback
// threads, which must not block. What such work waits on (the embed
// batcher, fsync'd RocksDB writes, index searches, quorum acks) is the
// engine's; a task holds its worker while it waits.
//
// A fixed set of threads taking tasks in FIFO order from one queue, which
// may be bounded:
//  - Submit queues whatever is given: for callers that bound their tasks
//    themselves (each ingest stream has at most one batch queued or running,
//    and StreamGate bounds the streams);
//  - TrySubmit refuses a task when `max_queued` tasks already wait (the unary
//    calls, which nothing else bounds: one client can open thousands), so a
//    burst costs a refusal, not memory;
//  - Withdraw takes a task that has not started out of the queue: a call
//    cancelled while it waits (HTTP/2 rapid reset: HEADERS, the request,
//    RST_STREAM) gives its place back at once instead of holding it until a
//    worker pops it.
//
// Thread-safety: every method may be called from any thread.

#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <thread>
#include <vector>

namespace neodb::api {

class WorkerPool {
 public:
  // Names a queued task, for Withdraw.
  using Ticket = uint64_t;

  // REQUIRES: threads >= 1. `max_queued`: tasks waiting (not running) at
  // once for TrySubmit; 0 = no bound.
  WorkerPool(int threads, size_t max_queued);
  // Runs the tasks still queued, then joins the threads.
  ~WorkerPool();
  WorkerPool(const WorkerPool&) = delete;
  WorkerPool& operator=(const WorkerPool&) = delete;

  // Runs `task` on a worker thread, after the tasks queued before it,
  // whatever the bound.
  void Submit(std::function<void()> task);

  // As Submit, unless max_queued tasks already wait: then nullopt, and
  // `task` is dropped unrun.
  std::optional<Ticket> TrySubmit(std::function<void()> task);

  // Takes `ticket`'s task out of the queue if no worker has taken it yet:
  // true when it did (the task is destroyed unrun), false when it is
  // running or has run.
  bool Withdraw(Ticket ticket);

  int threads() const { return static_cast<int>(threads_.size()); }
  size_t max_queued() const { return max_queued_; }
  // Tasks waiting for a worker now.
  size_t queued() const;
  // Tasks TrySubmit refused, and tasks withdrawn, since the start.
  int64_t refused() const;
  int64_t withdrawn() const;

 private:
  Ticket QueueLocked(std::function<void()> task);
  void Loop();

  const size_t max_queued_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  // By ticket, which grows: FIFO order, and Withdraw in O(log n).
  std::map<Ticket, std::function<void()>> tasks_;
  Ticket next_ticket_ = 0;
  int64_t refused_ = 0;
  int64_t withdrawn_ = 0;
  bool stop_ = false;
  std::vector<std::thread> threads_;
};

}  // namespace neodb::api
