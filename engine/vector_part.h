#pragma once
// VectorPart: a collection's vector index (index::VectorIndex, any kind the
// factory makes) as a DerivedIndex. Snapshots go straight into the
// collection's snapshot directory (index/snapshot.h), where they always were.
//
// Thread-safety: as index::VectorIndex (internally locked).

#include <memory>

#include "engine/derived_index.h"
#include "index/vector_index.h"

namespace neodb::engine {

class VectorPart : public DerivedIndex {
 public:
  explicit VectorPart(std::unique_ptr<index::VectorIndex> index) : index_(std::move(index)) {}

  std::string_view kind() const override { return "vector"; }
  absl::Status Apply(std::span<const Change> changes) override;
  absl::Status Save(Env* env, const std::string& dir, uint64_t covered_seq, const std::string& model_id,
                    int keep) const override;
  absl::StatusOr<uint64_t> Load(const std::string& dir, const SnapshotKey& key) override;
  size_t size() const override { return index_->size(); }
  std::vector<int64_t> Ids() const override { return index_->Ids(); }
  bool NeedsRebuild() const override { return index_->NeedsRebuild(); }

  const index::VectorIndex& index() const { return *index_; }

 private:
  std::unique_ptr<index::VectorIndex> index_;
};

}  // namespace neodb::engine
