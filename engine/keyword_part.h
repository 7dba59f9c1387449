#pragma once
// KeywordPart: a collection's keyword (BM25) index (index/keyword) as a
// DerivedIndex, kept equal to the store by the same Apply(change) path as the
// vector index. A document is indexed as its text (weight 1) plus, when the
// collection names a title field and the document's metadata holds a string
// there, that string as a second field of the collection's title weight.
//
// Snapshot: one file, <snapshot dir>/keyword.snap, written atomically beside
// the vector snapshot with the same covered sequence. Internal ids are shared
// with the vector index, and only the vector snapshot records the model (a
// reindex renumbers the documents), so a keyword snapshot is loaded only when
// it covers exactly the sequence of the vector snapshot loaded with it
// (SnapshotKey::paired_seq); otherwise it is rebuilt from the store scan that
// startup does anyway.
//
// Thread-safety: as keyword::KeywordIndex (internally locked); Apply, Save and
// Load are called by one thread at a time (DerivedIndex's contract).

#include <atomic>
#include <memory>
#include <string>

#include "engine/derived_index.h"
#include "engine/embed_settings.h"
#include "index/keyword/keyword_index.h"

namespace neodb::engine {

class KeywordPart : public DerivedIndex {
 public:
  static absl::StatusOr<std::unique_ptr<KeywordPart>> Make(const CollectionSettings& settings);

  std::string_view kind() const override { return "keyword"; }
  absl::Status Apply(std::span<const Change> changes) override;
  absl::Status Save(Env* env, const std::string& dir, uint64_t covered_seq, const std::string& model_id,
                    int keep) const override;
  absl::StatusOr<uint64_t> Load(const std::string& dir, const SnapshotKey& key) override;
  size_t size() const override { return index_->size(); }
  std::vector<int64_t> Ids() const override;

  const keyword::KeywordIndex& index() const { return *index_; }
  // Bytes of the snapshot file last written or loaded (0: none yet).
  uint64_t snapshot_bytes() const { return snapshot_bytes_.load(); }

  static std::string SnapshotPath(const std::string& dir);

 private:
  KeywordPart(std::unique_ptr<keyword::KeywordIndex> index, std::string title_field,
              float title_weight)
      : index_(std::move(index)),
        title_field_(std::move(title_field)),
        title_weight_(title_weight) {}

  std::unique_ptr<keyword::KeywordIndex> index_;
  const std::string title_field_;
  const float title_weight_;
  mutable std::atomic<uint64_t> snapshot_bytes_{0};
};

}  // namespace neodb::engine
