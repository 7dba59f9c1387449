#include "tools/neodb/idle_trim.h"

#include <dlfcn.h>
#include <time.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>

#include "absl/time/clock.h"
#include "spdlog/spdlog.h"
#ifdef __GLIBC__
#include <malloc.h>
#endif

namespace neodb::cli {
namespace {

double CpuSeconds(clockid_t clock) {
  timespec ts{};
  clock_gettime(clock, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

uint64_t ResidentBytes() {
  long pages = 0, resident = 0;
  FILE* f = std::fopen("/proc/self/statm", "r");
  if (f == nullptr) return 0;
  if (std::fscanf(f, "%ld %ld", &pages, &resident) != 2) resident = 0;
  std::fclose(f);
  return static_cast<uint64_t>(resident) * static_cast<uint64_t>(sysconf(_SC_PAGESIZE));
}

double Mib(uint64_t bytes) { return static_cast<double>(bytes) / (1 << 20); }

// jemalloc's control entry point when jemalloc is the process's malloc.
using MallctlFn = int (*)(const char*, void*, size_t*, void*, size_t);

MallctlFn JemallocMallctl() {
  static const MallctlFn fn = reinterpret_cast<MallctlFn>(dlsym(RTLD_DEFAULT, "mallctl"));
  return fn;
}

}  // namespace

void ReleaseFreeHeapMemory() {
  const uint64_t before = ResidentBytes();
  if (MallctlFn mallctl = JemallocMallctl()) {
    // "arena.<MALLCTL_ARENAS_ALL>.purge" (MALLCTL_ARENAS_ALL is 4096).
    mallctl("arena.4096.purge", nullptr, nullptr, nullptr, 0);
    const uint64_t after = ResidentBytes();
    spdlog::info("idle: jemalloc purged its arenas; resident {:.1f} -> {:.1f} MiB", Mib(before),
                 Mib(after));
    return;
  }
#ifdef __GLIBC__
  const struct mallinfo2 m = mallinfo2();
  malloc_trim(0);
  const uint64_t after = ResidentBytes();
  spdlog::info(
      "idle: malloc_trim returned {:.1f} MiB; resident {:.1f} -> {:.1f} MiB (malloc before: "
      "{:.1f} MiB in use, {:.1f} MiB free in its arenas, {:.1f} MiB in mmapped blocks)",
      Mib(before > after ? before - after : 0), Mib(before), Mib(after), Mib(m.uordblks),
      Mib(m.fordblks), Mib(m.hblkhd));
#endif
}

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
      ReleaseFreeHeapMemory();
      lock.lock();
      own_cpu = CpuSeconds(CLOCK_THREAD_CPUTIME_ID) - t0;
    }
  }
}

}  // namespace neodb::cli
