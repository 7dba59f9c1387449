#include "engine/reindex_staging.h"

#include <vector>

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "spdlog/spdlog.h"

namespace neodb::engine {

absl::Status RollForward(db::Store& store, const db::CollectionSpec& staging,
                         const std::function<void()>& after_chunk) {
  const std::string target = TargetOf(staging.name);
  uint64_t moved = 0;
  std::string token;
  while (true) {
    // Pages in id order; what a page held is deleted behind the cursor.
    ASSIGN_OR_RETURN(db::ListResult page, store.List(staging.name, token, 256));
    if (page.documents.empty()) break;
    token = page.next_page_token;
    std::vector<std::string> ids;
    ids.reserve(page.documents.size());
    for (const auto& d : page.documents) ids.push_back(d.id);
    RETURN_IF_ERROR(store.Upsert(target, std::move(page.documents)).status());
    RETURN_IF_ERROR(store.Delete(staging.name, ids).status());
    moved += ids.size();
    if (after_chunk) after_chunk();
    if (token.empty()) break;
  }
  db::CollectionUpdate u;
  u.model_id = staging.model_id;
  u.model_dir = staging.model_dir;
  u.precision = staging.precision;
  // The settings the reindex embedded with (the new model's, where the
  // collection held the old one's; engine/model_settings.h).
  u.pooling = staging.pooling;
  u.query_instruction = staging.query_instruction;
  u.document_instruction = staging.document_instruction;
  u.fusion = staging.fusion;
  u.fusion_alpha = staging.fusion_alpha;
  // The model it leaves, which a client may name to go back (a rollback).
  // Not when the collection is on the target already: a roll-forward that a
  // crash cut short after this update runs again, and a reindex onto the
  // same model leaves none.
  ASSIGN_OR_RETURN(const db::CollectionSpec before, store.GetCollection(target));
  if (before.model_dir != staging.model_dir) u.previous_model_dir = before.model_dir;
  RETURN_IF_ERROR(store.UpdateCollection(target, u).status());
  RETURN_IF_ERROR(store.DropCollection(staging.name));
  spdlog::info("collection '{}': reindex committed ({} documents now on model {})", target, moved,
               staging.model_id);
  return absl::OkStatus();
}

}  // namespace neodb::engine
