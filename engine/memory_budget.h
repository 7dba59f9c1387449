#pragma once
// The server's memory budget (issue 19, "Bounded memory"), and the two
// process-memory primitives it and `neodb serve --idle-trim` share.
//
// What the budget counts is the process's resident set (VmRSS): models,
// indexes, RocksDB's memtables and block cache, and the free heap that malloc
// keeps. Admission refuses the work that grows it — writes (new data) and
// encoder work (the largest transient allocations: tokens, activations) —
// while resident memory is over the budget; reads, deletes, keyword and
// near-vector searches go on, so a client can still shrink the data. Before
// refusing, the budget gives back malloc's free heap (at most once a second)
// and looks again, so memory that is only held, not used, never refuses work.

#include <atomic>
#include <cstdint>
#include <string_view>

#include "absl/status/status.h"

namespace neodb::engine {

// The process's resident set in bytes (/proc/self/statm); 0 if unreadable.
uint64_t ResidentBytes();

// Gives the free memory of the allocator in use back to the OS: jemalloc's
// arena purge when jemalloc is the process's malloc (e.g. LD_PRELOAD),
// otherwise glibc's malloc_trim(0). Logs what it returned, with `why`.
// Returns the drop in resident bytes. Thread-safe; costs a walk over the
// heap's free chunks (milliseconds for hundreds of MiB).
uint64_t ReleaseFreeHeapMemory(std::string_view why);

// Thread-safe.
class MemoryBudget {
 public:
  // `max_bytes` 0: no budget, Admit always admits.
  explicit MemoryBudget(uint64_t max_bytes) : max_bytes_(max_bytes) {}

  // OK while resident memory is within the budget (after giving back free
  // heap, see above); else RESOURCE_EXHAUSTED naming the budget and its flag.
  // `what` names the refused work in the message ("upsert").
  absl::Status Admit(std::string_view what) const;

  // Requests refused since start.
  uint64_t refused() const { return refused_.load(std::memory_order_relaxed); }

 private:
  const uint64_t max_bytes_;
  mutable std::atomic<int64_t> last_release_ns_{0};
  mutable std::atomic<uint64_t> refused_{0};
};

}  // namespace neodb::engine
