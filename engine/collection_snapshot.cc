// Collection: its indexes' snapshots, written and loaded (a snapshot only
// saves startup work: the store is the truth, and an index without a usable
// snapshot is rebuilt from it).
#include <algorithm>

#include "common/status_macros.h"
#include "engine/collection.h"
#include "spdlog/spdlog.h"

namespace neodb::engine {
namespace {

constexpr size_t kScanBatch = 4096;

}  // namespace

absl::StatusOr<std::shared_ptr<Collection>> Collection::Load(const db::Store& store,
                                                            const db::CollectionSpec& spec,
                                                            const std::string& snapshot_dir,
                                                            uint64_t last_seq,
                                                            LoadReport* report) {
  ASSIGN_OR_RETURN(CollectionSettings settings, ParseSettings(spec));
  ASSIGN_OR_RETURN(std::shared_ptr<IndexSet> indexes, IndexSet::Make(settings));
  // Each derived index from its snapshot where one matches; the others from
  // one store scan. The scan sees the store as of now (nothing writes during
  // startup); the loaded ones are brought forward by the replay in Startup.
  uint64_t covered = last_seq;
  std::vector<DerivedIndex*> missing;
  SnapshotKey key{spec.model_id, last_seq, std::nullopt};
  for (DerivedIndex* d : indexes->all()) {
    auto seq = d->Load(snapshot_dir, key);
    // The others share the vector index's internal ids (keyword_part.h).
    if (d == &indexes->vector()) key.paired_seq = seq.ok() ? *seq : 0;
    if (d == &indexes->keyword()) report->keyword_from_snapshot = seq.ok();
    if (seq.ok()) {
      covered = std::min(covered, *seq);
      continue;
    }
    missing.push_back(d);
    if (!absl::IsNotFound(seq.status())) {
      spdlog::warn("collection '{}': no usable {} snapshot ({}); rebuilding", spec.name, d->kind(),
                   seq.status().ToString());
    }
  }
  const bool vector_loaded = missing.empty() || missing.front() != &indexes->vector();
  if (!missing.empty()) {
    std::vector<Change> batch;
    auto apply = [&]() -> absl::Status {
      for (DerivedIndex* d : missing) RETURN_IF_ERROR(d->Apply(batch));
      batch.clear();
      return absl::OkStatus();
    };
    RETURN_IF_ERROR(store.ScanDocuments(spec.name, [&](const db::Document& d) -> absl::Status {
      Change c;
      c.added = d;
      batch.push_back(std::move(c));
      return batch.size() >= kScanBatch ? apply() : absl::OkStatus();
    }));
    RETURN_IF_ERROR(apply());
  }
  report->vector_from_snapshot = vector_loaded;
  auto c = std::make_shared<Collection>(store, std::move(settings), std::move(indexes));
  c->covered_seq = covered;
  return c;
}

absl::Status Collection::SaveSnapshot(Env* env, const std::string& snapshot_dir,
                                      uint64_t covered_seq, int keep) const {
  auto s = state();
  for (const DerivedIndex* d : s->indexes->all()) {
    RETURN_IF_ERROR(d->Save(env, snapshot_dir, covered_seq, s->settings.spec.model_id, keep));
  }
  return absl::OkStatus();
}

}  // namespace neodb::engine
