#pragma once
// SideTask: runs a piece of a query (a hybrid query's keyword leg) on an idle
// helper thread while the caller's thread does another piece (the vector
// leg), and runs it on the caller's thread when no helper has started it by
// the time the caller needs it. So a query never waits for a busy helper:
// when every core is taken the pieces run one after the other on the
// caller's thread, as they would without helpers, and with a core free they
// overlap.
//
//   SideTask keyword(&helpers, [&] { kl = FetchLeg(keyword_leg, depth); });
//   vl = FetchLeg(vector_leg, depth);
//   keyword.Join();  // kl is set from here on
//
// Thread-safety: SideHelpers may be used from any number of threads. A
// SideTask belongs to the thread that made it; its function may run on
// another thread, so what it touches must be safe to read there while the
// caller reads it too. The destructor joins.

#include <condition_variable>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

namespace neodb::engine {

// A few helper threads, started on first use.
class SideHelpers {
 public:
  // REQUIRES: threads >= 1.
  explicit SideHelpers(int threads);
  // Joins the threads. REQUIRES: no SideTask on it is alive.
  ~SideHelpers();
  SideHelpers(const SideHelpers&) = delete;
  SideHelpers& operator=(const SideHelpers&) = delete;

  // The process's helpers for the search path: one thread per CPU beyond
  // the first, at least one and at most 8. Never destroyed.
  static SideHelpers& ForSearch();

 private:
  friend class SideTask;
  struct Job;
  // Hands `job` to an idle helper; false when none is idle (nothing queued).
  bool Offer(const std::shared_ptr<Job>& job);
  void Loop();

  const int threads_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<std::shared_ptr<Job>> queue_;  // offered, not yet taken
  int idle_ = 0;                            // helpers waiting for a job
  int started_ = 0;                         // helper threads started so far
  bool stop_ = false;
  std::vector<std::thread> workers_;
};

class SideTask {
 public:
  // Offers `fn` to an idle helper of `helpers` (or runs nothing yet).
  SideTask(SideHelpers* helpers, std::function<void()> fn);
  // Joins.
  ~SideTask();
  SideTask(const SideTask&) = delete;
  SideTask& operator=(const SideTask&) = delete;

  // Returns once the function has run: on the caller's thread if no helper
  // has taken it yet, else after the helper finished it.
  void Join();

 private:
  SideHelpers* const helpers_;
  std::shared_ptr<SideHelpers::Job> job_;
  bool joined_ = false;
};

}  // namespace neodb::engine
