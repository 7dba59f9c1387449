#pragma once
// `neodb serve --idle-trim`: gives the heap memory that malloc keeps free back
// to the OS once the server has gone quiet (issue 19, "Bounded memory").
//
// Why: glibc frees to its arenas, not to the kernel; pages freed in the middle
// of a heap (everything but the top chunk) stay resident until malloc_trim(0)
// walks the free chunks and madvises them away. jemalloc without background
// threads likewise purges only while something allocates. After a burst of
// requests the server would otherwise sit at its burst's resident size
// (numbers: bench/README.md, "Resident memory under many requests").
//
// Idle means: the whole process used less than `idle_cpu_fraction` of one core
// in each one-second tick for `idle_after`. That needs no hook into the
// request path, and catches every kind of work (queries, writes, the
// maintenance thread's rebuilds and snapshots). The trimmer releases once per
// idle period: the next release waits until the process was busy and went
// quiet again. Its own release work does not count as busy.

#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <thread>

#include "absl/time/time.h"

namespace neodb::cli {

struct IdleTrimOptions {
  // Quiet time before the release; zero or less turns the trimmer off.
  // Default: 10 s.
  absl::Duration idle_after = absl::Seconds(10);
  // A tick is busy when the process used more than this share of one core.
  // Default: 0.02 (20 ms of CPU per second).
  double idle_cpu_fraction = 0.02;
};

// A thread that calls engine::ReleaseFreeHeapMemory (malloc_trim(0), or
// jemalloc's arena purge; engine/memory_budget.h) once per idle period.
// Thread-safe; the destructor stops and joins the thread.
class IdleTrimmer {
 public:
  explicit IdleTrimmer(const IdleTrimOptions& options);
  ~IdleTrimmer();
  IdleTrimmer(const IdleTrimmer&) = delete;
  IdleTrimmer& operator=(const IdleTrimmer&) = delete;

 private:
  void Loop();

  const IdleTrimOptions options_;
  std::mutex mu_;
  std::condition_variable cv_;
  bool stop_ = false;  // guarded by mu_
  std::thread thread_;
};

}  // namespace neodb::cli
