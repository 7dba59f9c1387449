#pragma once
// MetadataTable: internal id -> metadata of every live document of a
// collection, what filters read during an index search. A DerivedIndex that
// writes no snapshot: it is rebuilt from the store scan every startup does.
//
// Thread-safety: safe for concurrent use. A FilterView holds a shared lock for
// its lifetime, so Apply waits for the searches that read the table.

#include <memory>
#include <shared_mutex>
#include <unordered_map>

#include "api/engine/derived_index.h"
#include "db/filter.h"
#include "index/vector_index.h"

namespace neodb::engine {

class MetadataTable : public DerivedIndex {
 public:
  std::string_view kind() const override { return "metadata"; }
  absl::Status Apply(std::span<const Change> changes) override;
  absl::Status Save(Env*, const std::string&, uint64_t, const std::string&, int) const override {
    return absl::OkStatus();
  }
  absl::StatusOr<uint64_t> Load(const std::string&, const SnapshotKey&) override {
    return absl::NotFoundError("metadata is rebuilt from the store");
  }
  size_t size() const override;
  std::vector<int64_t> Ids() const override;

  // An index::IdFilter over this table for `filter` (not owned; must outlive
  // the view). Holds the table's shared lock while it lives.
  class FilterView : public index::IdFilter {
   public:
    FilterView(const MetadataTable& table, const db::Filter& filter)
        : lock_(table.mu_), table_(table), filter_(filter) {}
    bool Allowed(int64_t id) const override {
      auto it = table_.metadata_.find(id);
      return it != table_.metadata_.end() && filter_.Matches(it->second);
    }

   private:
    std::shared_lock<std::shared_mutex> lock_;
    const MetadataTable& table_;
    const db::Filter& filter_;
  };

 private:
  mutable std::shared_mutex mu_;
  std::unordered_map<int64_t, db::Metadata> metadata_;
};

}  // namespace neodb::engine
