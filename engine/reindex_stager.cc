#include "engine/reindex_stager.h"

#include <set>

#include "absl/time/time.h"
#include "common/status_macros.h"
#include "spdlog/spdlog.h"

namespace neodb::engine {
namespace {

constexpr size_t kReindexBatch = 64;

}  // namespace

ReindexStager::ReindexStager(db::Store& store, std::string name, std::string staging,
                             Model& target, encoder::EmbedOptions options,
                             std::function<void(uint64_t)> progress,
                             std::function<bool()> stopping)
    : store_(store),
      name_(std::move(name)),
      staging_(std::move(staging)),
      target_(target),
      target_id_(target.embedder->model_id()),
      options_(std::move(options)),
      progress_(std::move(progress)),
      stopping_(std::move(stopping)) {}

absl::Status ReindexStager::Stage() {
  if (batch_.empty()) return absl::OkStatus();
  std::vector<std::string> texts;
  std::vector<size_t> todo;
  for (size_t i = 0; i < batch_.size(); ++i) {
    if (!batch_[i].vector.empty()) continue;
    texts.push_back(batch_[i].text);
    todo.push_back(i);
  }
  if (!texts.empty()) {
    ASSIGN_OR_RETURN(std::vector<encoder::Embedding> e,
                     target_.batcher->Embed(std::move(texts), options_, absl::InfiniteFuture()));
    for (size_t j = 0; j < todo.size(); ++j) batch_[todo[j]].vector = std::move(e[j].vector);
  }
  for (auto& d : batch_) d.model_id = target_id_;
  RETURN_IF_ERROR(store_.Upsert(staging_, std::move(batch_)).status());
  batch_.clear();
  return absl::OkStatus();
}

absl::Status ReindexStager::Scan(bool resume) {
  uint64_t done = 0;
  uint64_t reused = 0;
  RETURN_IF_ERROR(store_.ScanDocuments(
      name_,
      [&](const db::Document& d) -> absl::Status {
        db::Document copy = d;
        copy.vector.clear();
        if (resume) {
          auto staged = store_.Get(staging_, d.id);
          if (!staged.ok() && !absl::IsNotFound(staged.status())) return staged.status();
          if (staged.ok() && staged->text == d.text && staged->model_id == target_id_) {
            copy.vector = std::move(staged->vector);
            ++reused;
          }
        }
        batch_.push_back(std::move(copy));
        if (batch_.size() < kReindexBatch) return absl::OkStatus();
        RETURN_IF_ERROR(Stage());
        done += kReindexBatch;
        progress_(done);
        if (stopping_()) return absl::CancelledError("server is shutting down");
        return absl::OkStatus();
      },
      &covered_));
  RETURN_IF_ERROR(Stage());
  if (!resume) return absl::OkStatus();
  ASSIGN_OR_RETURN(size_t discarded, DropDeleted());
  spdlog::info("reindex of '{}' resumed: {} staged vectors reused, {} discarded", name_, reused,
               discarded);
  return absl::OkStatus();
}

absl::StatusOr<size_t> ReindexStager::DropDeleted() {
  std::vector<std::string> gone;
  RETURN_IF_ERROR(store_.ScanDocuments(staging_, [&](const db::Document& d) -> absl::Status {
    auto live = store_.Get(name_, d.id);
    if (absl::IsNotFound(live.status())) {
      gone.push_back(d.id);
      return absl::OkStatus();
    }
    return live.status();
  }));
  if (!gone.empty()) RETURN_IF_ERROR(store_.Delete(staging_, gone).status());
  return gone.size();
}

absl::StatusOr<size_t> ReindexStager::CatchUp(uint64_t to) {
  std::set<std::string> changed;
  absl::Status rs = store_.ReadChangelog(covered_ + 1, [&](const db::ChangelogRecord& r) {
    if (r.seq > to) return absl::CancelledError("done");
    if (r.collection == name_ && !r.doc_id.empty()) changed.insert(r.doc_id);
    return absl::OkStatus();
  });
  if (!rs.ok() && !absl::IsCancelled(rs)) return rs;
  covered_ = to;
  for (const std::string& id : changed) {
    auto d = store_.Get(name_, id);
    if (absl::IsNotFound(d.status())) {
      RETURN_IF_ERROR(store_.Delete(staging_, {&id, 1}).status());
      continue;
    }
    RETURN_IF_ERROR(d.status());
    d->vector.clear();  // the old model's: Stage() embeds what has none
    batch_.push_back(std::move(*d));
    if (batch_.size() >= kReindexBatch) RETURN_IF_ERROR(Stage());
  }
  RETURN_IF_ERROR(Stage());
  return changed.size();
}

}  // namespace neodb::engine
