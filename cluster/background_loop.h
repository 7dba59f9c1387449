#pragma once
// BackgroundLoop: the thread a cluster object runs its rounds on (a node's
// heartbeats and reconciles, a replica's polls), the stop flag, and the
// sleep between rounds that Stop cuts short.
//
//   loop_.Start([this] {
//     while (!loop_.stopping()) {
//       Round();
//       if (!loop_.SleepFor(interval)) return;
//     }
//   });
//   ...
//   loop_.Stop();  // the body returns at its next check; joined
//
// Thread-safe. The destructor stops the loop.

#include <condition_variable>
#include <functional>
#include <mutex>
#include <thread>

#include "absl/time/time.h"

namespace neodb::cluster {

class BackgroundLoop {
 public:
  BackgroundLoop() = default;
  ~BackgroundLoop();
  BackgroundLoop(const BackgroundLoop&) = delete;
  BackgroundLoop& operator=(const BackgroundLoop&) = delete;

  // Runs `body` on a new thread unless one is running (a Stop since lets
  // it start again). `body` returns once stopping() is true.
  void Start(std::function<void()> body);
  // Makes stopping() true, wakes a SleepFor and joins the thread (none: no-op).
  void Stop();
  // True from Stop until the next Start.
  bool stopping() const;
  // True while a started thread has not been stopped.
  bool running() const;
  // Sleeps for `d` or until Stop; false when stopping.
  bool SleepFor(absl::Duration d);

 private:
  mutable std::mutex mu_;
  std::condition_variable cv_;
  bool stop_ = false;  // guarded by mu_
  std::thread thread_;  // guarded by mu_
};

}  // namespace neodb::cluster
