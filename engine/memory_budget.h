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

// Fixes glibc's mmap threshold at its initial 128 KiB, so that every block at
// least that large is its own mapping, returned to the kernel when freed.
// Why: left alone, glibc raises the threshold to the size of each mmapped
// block freed (up to 32 MiB). After the first index rebuild or encoder pass
// frees a multi-MiB array, such arrays come from the heaps instead, where
// they interleave with long-lived blocks (the RocksDB block cache, memtable
// arenas) and leave holes that neither reuse nor malloc_trim fully recover:
// a default-model ingest soak grew ~20 MiB per 100k requests with no growth
// of live memory (bench/README.md, "Ingest soak"). Blocks of that size are
// few (a few per pass or rebuild), so the mmap and page-fault cost is small.
// Does nothing under another allocator (jemalloc through LD_PRELOAD), or when
// the operator set the threshold (MALLOC_MMAP_THRESHOLD_, or GLIBC_TUNABLES
// naming glibc.malloc.mmap_threshold). Call once, early, before threads
// start. Returns whether it set the threshold.
bool PinMallocMmapThreshold();

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
