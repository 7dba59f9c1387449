#include "engine/keyword_part.h"

#include <filesystem>
#include <optional>
#include <string_view>
#include <variant>

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "spdlog/spdlog.h"

namespace neodb::engine {
namespace fs = std::filesystem;

absl::StatusOr<std::unique_ptr<KeywordPart>> KeywordPart::Make(const CollectionSettings& settings) {
  ASSIGN_OR_RETURN(std::unique_ptr<keyword::KeywordIndex> index,
                   keyword::KeywordIndex::Create(settings.keyword));
  return std::unique_ptr<KeywordPart>(
      new KeywordPart(std::move(index), settings.title_field, settings.title_weight));
}

absl::Status KeywordPart::Apply(std::span<const Change> changes) {
  // In log order: Upsert replaces and Remove of an absent id is a no-op, so a
  // replay of records a snapshot already covers leaves the index as it was.
  for (const Change& c : changes) {
    if (c.removed != 0) index_->Remove(static_cast<uint64_t>(c.removed));
    if (!c.added) continue;
    const db::Document& d = *c.added;
    std::optional<std::string_view> title;
    if (!title_field_.empty()) {
      auto it = d.metadata.find(title_field_);
      if (it != d.metadata.end()) {
        if (const auto* t = std::get_if<std::string>(&it->second)) title = *t;
      }
    }
    RETURN_IF_ERROR(index_->Upsert(d.internal_id, d.text, title, title_weight_));
  }
  return absl::OkStatus();
}

std::string KeywordPart::SnapshotPath(const std::string& dir) {
  return (fs::path(dir) / "keyword.snap").string();
}

absl::Status KeywordPart::Save(Env* env, const std::string& dir, uint64_t covered_seq,
                               const std::string&, int) const {
  RETURN_IF_ERROR(env->CreateDir(dir));
  const std::string path = SnapshotPath(dir);
  RETURN_IF_ERROR(index_->Save(path, covered_seq, env));
  std::error_code ec;
  const auto bytes = fs::file_size(path, ec);
  snapshot_bytes_ = ec ? 0 : static_cast<uint64_t>(bytes);
  return absl::OkStatus();
}

absl::StatusOr<uint64_t> KeywordPart::Load(const std::string& dir, const SnapshotKey& key) {
  const std::string path = SnapshotPath(dir);
  ASSIGN_OR_RETURN(keyword::KeywordIndex::Loaded loaded, keyword::KeywordIndex::Load(path));
  const keyword::KeywordOptions& want = index_->options();
  const keyword::KeywordOptions& got = loaded.index->options();
  if (got.analyzer != want.analyzer || got.k1 != want.k1 || got.b != want.b) {
    spdlog::warn("{} was built with other keyword settings; rebuilding", path);
    return absl::NotFoundError("keyword snapshot of other settings");
  }
  if (loaded.covered_seq > key.last_seq ||
      (key.paired_seq && loaded.covered_seq != *key.paired_seq)) {
    spdlog::warn("{} (sequence {}) does not pair with the vector snapshot; rebuilding", path,
                 loaded.covered_seq);
    return absl::NotFoundError("keyword snapshot does not pair with the vector snapshot");
  }
  index_ = std::move(loaded.index);
  std::error_code ec;
  const auto bytes = fs::file_size(path, ec);
  snapshot_bytes_ = ec ? 0 : static_cast<uint64_t>(bytes);
  return loaded.covered_seq;
}

std::vector<int64_t> KeywordPart::Ids() const {
  std::vector<uint64_t> ids = index_->Ids();
  return std::vector<int64_t>(ids.begin(), ids.end());
}

}  // namespace neodb::engine
