// Database on a full disk: whether writes are taken, and the probe that makes
// a database that opened read-only writable again without a restart.
//
// Opening the store for writing needs space (db/store.h), so on a full disk
// the store opens read-only: reads and searches work from the last durable
// state (every acknowledged write: the WAL is replayed into memory), and
// every write is refused with the store's RESOURCE_EXHAUSTED naming the data
// directory. Each write first tries to reopen the store writable, and so
// does the maintenance thread every pass (0.5 s), so health and metrics say
// "writable" soon after space returns even when no client writes.
#include "engine/database.h"
#include "spdlog/spdlog.h"

namespace neodb::engine {

absl::Status Database::WriteState() const { return store_->WriteState(); }

void Database::ProbeWritable() {
  if (store_->read_only() && !store_->TryReopenWritable().ok()) return;  // still full
  if (reindexes_deferred_) {
    reindexes_deferred_ = false;
    ResumeInterruptedReindexes();
  }
}

}  // namespace neodb::engine
