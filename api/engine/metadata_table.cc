#include "api/engine/metadata_table.h"

#include <algorithm>
#include <mutex>

namespace neodb::engine {

absl::Status MetadataTable::Apply(std::span<const Change> changes) {
  std::unique_lock<std::shared_mutex> lock(mu_);
  for (const Change& c : changes) {
    if (c.removed != 0) metadata_.erase(c.removed);
    if (c.added) metadata_[static_cast<int64_t>(c.added->internal_id)] = c.added->metadata;
  }
  return absl::OkStatus();
}

size_t MetadataTable::size() const {
  std::shared_lock<std::shared_mutex> lock(mu_);
  return metadata_.size();
}

std::vector<int64_t> MetadataTable::Ids() const {
  std::vector<int64_t> ids;
  {
    std::shared_lock<std::shared_mutex> lock(mu_);
    ids.reserve(metadata_.size());
    for (const auto& [id, m] : metadata_) ids.push_back(id);
  }
  std::sort(ids.begin(), ids.end());
  return ids;
}

}  // namespace neodb::engine
