#pragma once
// IndexSet: every index a collection derives from its documents, as named
// members (what searches call) and as a list of DerivedIndex (what startup,
// catch-up, rebuild, snapshots and Verify walk). Adding a kind of index is
// local: a member, a line in Make, and its use in the query path.
//
// An IndexSet is built whole and swapped whole (a rebuild or a reindex makes a
// new one), so a search that took one sees a consistent set.
//
// Thread-safety: the members are internally locked (see each).

#include <memory>
#include <span>
#include <vector>

#include "engine/derived_index.h"
#include "engine/embed_settings.h"
#include "engine/keyword_part.h"
#include "engine/metadata_table.h"
#include "engine/vector_part.h"

namespace neodb::engine {

class IndexSet {
 public:
  // Empty indexes for a collection with `settings`.
  static absl::StatusOr<std::unique_ptr<IndexSet>> Make(const CollectionSettings& settings);

  VectorPart& vector() { return *vector_; }
  const VectorPart& vector() const { return *vector_; }
  const MetadataTable& metadata() const { return *metadata_; }
  const KeywordPart& keyword() const { return *keyword_; }
  // Every member, vector first.
  std::span<DerivedIndex* const> all() const { return all_; }

  // Applies `changes` to every member.
  absl::Status Apply(std::span<const Change> changes);
  // True when some member asks to be rebuilt.
  bool NeedsRebuild() const;

 private:
  IndexSet() = default;
  std::unique_ptr<VectorPart> vector_;
  std::unique_ptr<MetadataTable> metadata_;
  std::unique_ptr<KeywordPart> keyword_;
  std::vector<DerivedIndex*> all_;
};

}  // namespace neodb::engine
