#include "engine/metadata_patch.h"

#include <string_view>

#include "absl/strings/str_cat.h"

namespace neodb::engine {
namespace {

// Removes the field at `path`: the top-level key equal to the whole path
// first, else the dotted path walked through nested objects (the walk of
// db::FindPath, which reads a path the same way).
void RemovePath(db::Metadata& m, std::string_view path) {
  if (auto it = m.find(path); it != m.end()) {
    m.erase(it);
    return;
  }
  db::Metadata* level = &m;
  for (size_t dot; (dot = path.find('.')) != std::string_view::npos; path.remove_prefix(dot + 1)) {
    auto it = level->find(path.substr(0, dot));
    if (it == level->end()) return;
    auto* object = std::get_if<db::Object>(&it->second);
    if (object == nullptr) return;
    level = &object->fields;
  }
  if (auto it = level->find(path); it != level->end()) level->erase(it);
}

// Sets every field of `from` in `into`, merging objects key by key.
void Merge(db::Metadata& into, const db::Metadata& from) {
  for (const auto& [key, value] : from) {
    auto it = into.find(key);
    auto* old_obj = it == into.end() ? nullptr : std::get_if<db::Object>(&it->second);
    const auto* new_obj = std::get_if<db::Object>(&value);
    if (old_obj != nullptr && new_obj != nullptr) {
      Merge(old_obj->fields, new_obj->fields);
    } else {
      into.insert_or_assign(key, value);
    }
  }
}

}  // namespace

absl::Status ValidatePatch(const MetadataPatch& patch) {
  if (patch.mode == MetadataPatch::Mode::kReplace) {
    if (!patch.remove.empty()) {
      return absl::InvalidArgumentError(
          "remove is for a merge: a replace sets the whole metadata (leave the fields out)");
    }
  } else if (patch.metadata.empty() && patch.remove.empty()) {
    return absl::InvalidArgumentError(
        "nothing to update: give metadata to merge or fields to remove (or mode replace)");
  }
  for (const std::string& path : patch.remove) {
    if (path.empty() || path.size() > db::kMaxMetadataKeyBytes * db::kMaxMetadataDepth) {
      return absl::InvalidArgumentError(
          absl::StrCat("remove: a field path must be 1..",
                       db::kMaxMetadataKeyBytes * db::kMaxMetadataDepth, " bytes"));
    }
  }
  if (absl::Status s = db::ValidateMetadata(patch.metadata); !s.ok()) {
    return absl::InvalidArgumentError(absl::StrCat("metadata: ", s.message()));
  }
  return absl::OkStatus();
}

db::Metadata ApplyPatch(const db::Metadata& metadata, const MetadataPatch& patch) {
  if (patch.mode == MetadataPatch::Mode::kReplace) return patch.metadata;
  db::Metadata out = metadata;
  for (const std::string& path : patch.remove) RemovePath(out, path);
  Merge(out, patch.metadata);
  return out;
}

}  // namespace neodb::engine
