#pragma once
// The one reader of the change log for the derived indexes. Startup replay
// after a snapshot, catch-up after each write and a background rebuild's
// catch-up all go through ReplayChanges and then IndexSet::Apply, so the three
// cannot drift apart.

#include <cstdint>
#include <functional>
#include <span>
#include <string>

#include "absl/status/status.h"
#include "engine/derived_index.h"
#include "db/changelog_record.h"
#include "db/store.h"

namespace neodb::engine {

struct ReplaySink {
  // Whether records of this collection are wanted at all.
  std::function<bool(const std::string& collection)> wants;
  // Receives the resolved document changes of one collection, in log order,
  // in chunks (memory stays bounded over a long log).
  std::function<absl::Status(const std::string& collection, std::span<const Change> changes)> apply;
  // Create/drop records of wanted collections, in order after every change
  // before them was applied. May be empty.
  std::function<absl::Status(const db::ChangelogRecord& record)> structural;
};

struct ReplayResult {
  uint64_t first_seq = 0;  // first retained record read (0: none in range)
  uint64_t records = 0;    // document records of wanted collections
};

// Reads records with from_seq <= seq <= to_seq; each upsert is resolved to its
// document while that version is still live (GetByInternalId).
absl::StatusOr<ReplayResult> ReplayChanges(const db::Store& store, uint64_t from_seq,
                                           uint64_t to_seq, const ReplaySink& sink);

}  // namespace neodb::engine
