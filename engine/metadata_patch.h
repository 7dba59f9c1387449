#pragma once
// MetadataPatch: a change to a document's metadata that leaves its text and
// vector alone (Documents.UpdateMetadata). Applied to the stored metadata by
// the database under its write lock, and the document written back through
// the one write path (Store::Upsert), so the change log, replay, backups and
// replicas see an ordinary upsert.
//
//   kMerge    (default) first removes the `remove` paths, then sets each field
//             of `metadata`; where both the stored value and the new one are
//             objects they are merged the same way, key by key (RFC 7396's
//             merge, without its null: removal is by `remove`).
//   kReplace  the metadata becomes `metadata`; `remove` must be empty.
//
// A `remove` path addresses a field as filters do (db::FindPath): the
// top-level key equal to the whole path if there is one, else the dotted
// path through nested objects. Removing a missing field is not an error.

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "db/metadata.h"

namespace neodb::engine {

struct MetadataPatch {
  enum class Mode { kMerge, kReplace };
  Mode mode = Mode::kMerge;
  db::Metadata metadata;
  std::vector<std::string> remove;
};

// INVALID_ARGUMENT for a patch that can change nothing or cannot apply: no
// field set or removed (merge), a `remove` with replace, an empty or
// oversized path, invalid metadata (db::ValidateMetadata).
absl::Status ValidatePatch(const MetadataPatch& patch);

// `metadata` with `patch` applied. The result may still exceed the limits of
// db::ValidateMetadata (a merge can add fields): the store checks it.
db::Metadata ApplyPatch(const db::Metadata& metadata, const MetadataPatch& patch);

}  // namespace neodb::engine
