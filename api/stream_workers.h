#pragma once
// StreamWorkers: the threads that run what an ingest stream's messages cause
// (validation, embedding through the engine's embed queue, fsync'd store
// writes), so none of it runs on gRPC's callback threads, which must not
// block (ingest_reactors.h).
//
// A fixed pool of threads taking tasks in FIFO order. The queue needs no
// bound of its own: each stream has at most one task queued or running (it
// starts its next read only when its task is done), and StreamGate bounds
// the streams, so at most max_open tasks wait. The engine's queues do not
// fit here: the embed batcher (embed_batcher.h) runs encoder passes, and a
// task waits on it from one of these threads like the unary Upsert waits on
// it from a handler thread.
//
// Thread-safety: Submit may be called from any thread.

#include <condition_variable>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace neodb::api {

class StreamWorkers {
 public:
  // REQUIRES: threads >= 1.
  explicit StreamWorkers(int threads);
  // Runs the tasks still queued, then joins the threads.
  ~StreamWorkers();
  StreamWorkers(const StreamWorkers&) = delete;
  StreamWorkers& operator=(const StreamWorkers&) = delete;

  // Runs `task` on a worker thread, after the tasks queued before it.
  void Submit(std::function<void()> task);

  int threads() const { return static_cast<int>(threads_.size()); }

 private:
  void Loop();

  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<std::function<void()>> tasks_;
  bool stop_ = false;
  std::vector<std::thread> threads_;
};

}  // namespace neodb::api
