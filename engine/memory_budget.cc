#include "engine/memory_budget.h"

#include <dlfcn.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "spdlog/spdlog.h"
#ifdef __GLIBC__
#include <malloc.h>
#endif

namespace neodb::engine {
namespace {

double Mib(uint64_t bytes) { return static_cast<double>(bytes) / (1 << 20); }

// jemalloc's control entry point, when jemalloc is the process's malloc.
using MallctlFn = int (*)(const char*, void*, size_t*, void*, size_t);

MallctlFn JemallocMallctl() {
  static const MallctlFn fn = reinterpret_cast<MallctlFn>(dlsym(RTLD_DEFAULT, "mallctl"));
  return fn;
}

}  // namespace

uint64_t ResidentBytes() {
  long pages = 0, resident = 0;
  FILE* f = std::fopen("/proc/self/statm", "r");
  if (f == nullptr) return 0;
  if (std::fscanf(f, "%ld %ld", &pages, &resident) != 2) resident = 0;
  std::fclose(f);
  return static_cast<uint64_t>(resident) * static_cast<uint64_t>(sysconf(_SC_PAGESIZE));
}

uint64_t ReleaseFreeHeapMemory(std::string_view why) {
  const uint64_t before = ResidentBytes();
  if (MallctlFn mallctl = JemallocMallctl()) {
    // "arena.<MALLCTL_ARENAS_ALL>.purge"; MALLCTL_ARENAS_ALL is 4096.
    mallctl("arena.4096.purge", nullptr, nullptr, nullptr, 0);
    const uint64_t after = ResidentBytes();
    spdlog::info("{}: jemalloc purged its arenas; resident {:.1f} -> {:.1f} MiB", why, Mib(before),
                 Mib(after));
    return before > after ? before - after : 0;
  }
#ifdef __GLIBC__
  const struct mallinfo2 m = mallinfo2();
  malloc_trim(0);
  const uint64_t after = ResidentBytes();
  spdlog::info(
      "{}: malloc_trim returned {:.1f} MiB; resident {:.1f} -> {:.1f} MiB (malloc before: "
      "{:.1f} MiB in use, {:.1f} MiB free in its arenas, {:.1f} MiB in mmapped blocks)",
      why, Mib(before > after ? before - after : 0), Mib(before), Mib(after), Mib(m.uordblks),
      Mib(m.fordblks), Mib(m.hblkhd));
  return before > after ? before - after : 0;
#else
  return 0;
#endif
}

bool PinMallocMmapThreshold() {
#ifdef __GLIBC__
  if (JemallocMallctl() != nullptr) return false;
  if (std::getenv("MALLOC_MMAP_THRESHOLD_") != nullptr) return false;
  const char* tunables = std::getenv("GLIBC_TUNABLES");
  if (tunables != nullptr && std::strstr(tunables, "glibc.malloc.mmap_threshold") != nullptr) {
    return false;
  }
  // 128 KiB is glibc's own starting value (DEFAULT_MMAP_THRESHOLD_MIN); setting
  // it explicitly is what turns the dynamic raise off.
  return mallopt(M_MMAP_THRESHOLD, 128 * 1024) == 1;
#else
  return false;
#endif
}

absl::Status MemoryBudget::Admit(std::string_view what) const {
  if (max_bytes_ == 0) return absl::OkStatus();
  uint64_t resident = ResidentBytes();
  if (resident <= max_bytes_) return absl::OkStatus();
  // Over: perhaps only because malloc holds freed memory. One caller a second
  // gives it back; the others look again after it.
  const int64_t now = absl::GetCurrentTimeNanos();
  int64_t last = last_release_ns_.load(std::memory_order_relaxed);
  if (now - last >= 1'000'000'000 &&
      last_release_ns_.compare_exchange_strong(last, now, std::memory_order_relaxed)) {
    ReleaseFreeHeapMemory("over the memory budget");
    resident = ResidentBytes();
    if (resident <= max_bytes_) return absl::OkStatus();
  }
  refused_.fetch_add(1, std::memory_order_relaxed);
  const std::string over = absl::StrCat("the server's resident memory (", resident >> 20,
                                        " MiB) is over its budget of ", max_bytes_ >> 20, " MiB");
  return absl::ResourceExhaustedError(absl::StrCat(
      std::string(what), " refused: ", over,
      " (--max-memory-mib); reads, deletes, keyword and near-vector searches still work"));
}

}  // namespace neodb::engine
