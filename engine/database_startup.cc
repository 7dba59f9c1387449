// Database: startup recovery and index rebuilds.
#include <filesystem>
#include <set>

#include "absl/strings/str_cat.h"
#include "engine/change_replay.h"
#include "engine/database.h"
#include "engine/reindex_staging.h"
#include "common/status_macros.h"
#include "spdlog/spdlog.h"

namespace neodb::engine {
namespace {

constexpr size_t kScanBatch = 4096;

}  // namespace

absl::Status Database::FillFromStore(const std::string& name, IndexSet& indexes,
                                     uint64_t* covered) const {
  std::vector<Change> batch;
  RETURN_IF_ERROR(store_->ScanDocuments(
      name,
      [&](const db::Document& d) -> absl::Status {
        Change c;
        c.added = d;
        batch.push_back(std::move(c));
        if (batch.size() >= kScanBatch) {
          RETURN_IF_ERROR(indexes.Apply(batch));
          batch.clear();
        }
        return absl::OkStatus();
      },
      covered));
  if (!batch.empty()) RETURN_IF_ERROR(indexes.Apply(batch));
  return absl::OkStatus();
}

absl::StatusOr<std::shared_ptr<Collection>> Database::LoadCollection(const db::CollectionSpec& spec,
                                                                     uint64_t last_seq) {
  Collection::LoadReport report;
  ASSIGN_OR_RETURN(std::shared_ptr<Collection> c,
                   Collection::Load(*store_, spec, SnapshotDir(spec.name), last_seq, &report));
  ++(report.vector_from_snapshot ? snapshot_loads_ : index_rebuilds_);
  ++(report.keyword_from_snapshot ? keyword_snapshot_loads_ : keyword_rebuilds_);
  return c;
}

absl::Status Database::Startup() {
  ASSIGN_OR_RETURN(std::vector<db::CollectionSpec> specs, store_->ListCollections());
  // Reindexes that were under way: finish the committed; keep the others'
  // staging collections for ResumeInterruptedReindexes (the collection stays
  // on its model until that reindex commits), unless the collection is gone.
  std::set<std::string> names;
  for (const auto& spec : specs) names.insert(spec.name);
  for (const auto& spec : specs) {
    if (!IsStagingName(spec.name)) continue;
    if (spec.engine_state == kCommitMarker) {
      // The reindex committed but its moves did not all land: the
      // collection holds vectors of two models until they do, and that
      // takes writes. On a full disk the database cannot open (say why).
      if (store_->read_only()) {
        return absl::ResourceExhaustedError(absl::StrCat(
            "collection '", TargetOf(spec.name),
            "' has a committed reindex to finish before it can be read, which needs writes: ",
            store_->WriteState().message()));
      }
      spdlog::warn("collection '{}': finishing a committed reindex (model {})", TargetOf(spec.name),
                   spec.model_id);
      RETURN_IF_ERROR(RollForward(*store_, spec));
    } else if (names.count(TargetOf(spec.name))) {
      interrupted_reindexes_.push_back(spec);
    } else if (!store_->read_only()) {
      RETURN_IF_ERROR(store_->DropCollection(spec.name));
    }  // else (a full disk): left for a later start; nothing reads it
  }
  ASSIGN_OR_RETURN(specs, store_->ListCollections());
  const uint64_t last = store_->LastSequence();
  uint64_t replay_from = last;
  for (const auto& spec : specs) {
    if (IsStagingName(spec.name)) continue;  // not a collection of its own
    ASSIGN_OR_RETURN(std::shared_ptr<Collection> c, LoadCollection(spec, last));
    replay_from = std::min(replay_from, c->covered_seq);
    collections_[spec.name] = std::move(c);
  }
  // Replay the change log after each snapshot's covered position.
  if (replay_from < last) {
    ReplaySink sink;
    sink.wants = [&](const std::string& name) {
      auto it = collections_.find(name);
      return it != collections_.end() && !it->second->needs_rebuild;
    };
    sink.apply = [&](const std::string& name, std::span<const Change> changes) -> absl::Status {
      Collection& c = *collections_[name];
      std::vector<Change> after;
      for (const Change& ch : changes) {
        if (ch.seq > c.covered_seq) after.push_back(ch);
      }
      replayed_changes_ += after.size();
      return c.state()->indexes->Apply(after);
    };
    sink.structural = [&](const db::ChangelogRecord& r) -> absl::Status {
      Collection& c = *collections_[r.collection];
      if (r.seq > c.covered_seq)
        c.needs_rebuild = true;  // the snapshot predates a drop + re-create
      return absl::OkStatus();
    };
    ASSIGN_OR_RETURN(ReplayResult replayed, ReplayChanges(*store_, replay_from + 1, last, sink));
    // A log trimmed past an old snapshot: those collections must rebuild.
    const uint64_t first = replayed.first_seq == 0 ? last + 1 : replayed.first_seq;
    for (auto& [name, c] : collections_) {
      if (c->covered_seq + 1 < first && c->covered_seq < last) c->needs_rebuild = true;
    }
  }
  // Safety net: the indexes must hold exactly the stored documents.
  for (auto& [name, c] : collections_) {
    ASSIGN_OR_RETURN(uint64_t count, store_->Count(name));
    auto state = c->state();
    for (const DerivedIndex* d : state->indexes->all()) {
      if (!c->needs_rebuild && d->size() != count) {
        spdlog::warn("collection '{}': {} index holds {} entries, store {} documents; rebuilding",
                     name, d->kind(), d->size(), count);
        c->needs_rebuild = true;
      }
    }
    if (c->needs_rebuild) RETURN_IF_ERROR(RebuildIndexes(*c, /*background=*/false));
  }
  snapshot_seq_ = last;
  bool all_from_snapshot = index_rebuilds_ == 0 && keyword_rebuilds_ == 0 && replayed_changes_ == 0;
  // The snapshot only saves the next startup work; failing it (a full disk)
  // must not keep the database from opening, or a full disk would keep the
  // server down, reads included, until someone frees space by hand.
  if (!all_from_snapshot && !collections_.empty()) {
    absl::Status snap = SnapshotAll().status();
    if (!snap.ok()) spdlog::warn("startup snapshot not written (the next start replays more): {}", snap.ToString());
  }
  started_ = true;
  spdlog::info("database open: {} collections, {} from snapshots, {} rebuilt, {} changes replayed",
               collections_.size(), snapshot_loads_.load(), index_rebuilds_.load(),
               replayed_changes_.load());
  return absl::OkStatus();
}

absl::Status Database::RebuildIndexes(Collection& c, bool background) {
  auto state = c.state();
  const std::string& name = c.name();
  ASSIGN_OR_RETURN(std::shared_ptr<IndexSet> fresh, IndexSet::Make(state->settings));
  // The log after the scan stays until the catch-up below has read it.
  const uint64_t pin = background ? Pin() : 0;
  uint64_t covered = 0;
  absl::Status s = FillFromStore(name, *fresh, &covered);
  std::unique_lock<std::mutex> wlock(c.write_mu(), std::defer_lock);
  if (background) {
    wlock.lock();
    if (s.ok() && !c.dropped) {
      // Catch up with this collection's writes that committed after the
      // scan (under its lock, so no more come until the swap).
      ReplaySink sink;
      sink.wants = [&](const std::string& n) { return n == name; };
      sink.apply = [&](const std::string&, std::span<const Change> changes) {
        return fresh->Apply(changes);
      };
      s = ReplayChanges(*store_, covered + 1, store_->LastSequence(), sink).status();
    }
    // After the catch-up read the log: a snapshot round may trim meanwhile.
    Unpin(pin);
    if (c.dropped) return absl::OkStatus();  // nothing left to rebuild
    // A reindex committed meanwhile: it swapped in fresh indexes of its own
    // (on its settings, which `fresh` was not made with).
    if (c.state()->indexes != state->indexes) return absl::OkStatus();
  }
  RETURN_IF_ERROR(s);
  c.SwapIndexes(std::move(fresh));
  c.needs_rebuild = false;
  ++index_rebuilds_;
  ++keyword_rebuilds_;
  return absl::OkStatus();
}

}  // namespace neodb::engine
