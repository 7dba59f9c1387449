#include "tools/neodb/idle_trim.h"

#include <time.h>

#include <chrono>

#include "absl/time/clock.h"
#include "engine/memory_budget.h"

namespace neodb::cli {
namespace {

double CpuSeconds(clockid_t clock) {
  timespec ts{};
  clock_gettime(clock, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

}  // namespace

IdleTrimmer::IdleTrimmer(const IdleTrimOptions& options) : options_(options) {
  if (options_.idle_after > absl::ZeroDuration()) thread_ = std::thread([this] { Loop(); });
}

IdleTrimmer::~IdleTrimmer() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void IdleTrimmer::Loop() {
  const auto tick = std::chrono::seconds(1);
  double last_cpu = CpuSeconds(CLOCK_PROCESS_CPUTIME_ID);
  double own_cpu = 0;  // this thread's release work since the last tick
  absl::Time last_tick = absl::Now();
  absl::Time quiet_since = last_tick;
  bool released = true;  // nothing to give back before the first busy tick
  std::unique_lock<std::mutex> lock(mu_);
  while (!cv_.wait_for(lock, tick, [this] { return stop_; })) {
    const double cpu = CpuSeconds(CLOCK_PROCESS_CPUTIME_ID);
    const double used = cpu - last_cpu - own_cpu;
    last_cpu = cpu;
    own_cpu = 0;
    const absl::Time now = absl::Now();
    const double elapsed = absl::ToDoubleSeconds(now - last_tick);
    last_tick = now;
    if (used > options_.idle_cpu_fraction * elapsed) {
      quiet_since = now;
      released = false;
    } else if (!released && now - quiet_since >= options_.idle_after) {
      released = true;
      const double t0 = CpuSeconds(CLOCK_THREAD_CPUTIME_ID);
      lock.unlock();
      engine::ReleaseFreeHeapMemory("idle");
      lock.lock();
      own_cpu = CpuSeconds(CLOCK_THREAD_CPUTIME_ID) - t0;
    }
  }
}

}  // namespace neodb::cli
