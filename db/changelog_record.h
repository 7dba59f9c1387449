#pragma once
// One entry of the store's change log. Every committed mutation appends one
// record per affected document in the same atomic write batch as the data, so
// replaying the log after an index snapshot reproduces the index exactly.

#include <cstdint>
#include <string>

namespace neodb::db {

enum class ChangeOp : uint8_t {
  kUpsert = 1,            // (collection, doc_id) now has `internal_id`; `previous_internal_id`
                          // (0 if none) is stale.
  kDelete = 2,            // (collection, doc_id) removed; `previous_internal_id` is stale.
  kDropCollection = 3,    // the collection and all its documents are gone.
  kCreateCollection = 4,  // a collection was created (doc_id empty).
};

struct ChangelogRecord {
  // Strictly increasing, gap-free from 1 in commit order.
  uint64_t seq = 0;
  ChangeOp op = ChangeOp::kUpsert;
  std::string collection;
  std::string doc_id;
  uint64_t internal_id = 0;
  uint64_t previous_internal_id = 0;
};

}  // namespace neodb::db
