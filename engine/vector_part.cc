#include "engine/vector_part.h"

#include <map>
#include <set>

#include "common/status_macros.h"
#include "index/snapshot.h"
#include "spdlog/spdlog.h"

namespace neodb::engine {

absl::Status VectorPart::Apply(std::span<const Change> changes) {
  // Net the batch: an id added and removed within it never reaches the index.
  // (Removals are issued anyway: on replay the id may be in the snapshot.)
  std::set<int64_t> remove;
  std::map<int64_t, const std::vector<float>*> add;
  for (const Change& c : changes) {
    if (c.removed != 0) {
      add.erase(c.removed);
      remove.insert(c.removed);
    }
    if (c.added) {
      const int64_t id = static_cast<int64_t>(c.added->internal_id);
      add[id] = &c.added->vector;
    }
  }
  if (!remove.empty()) {
    std::vector<int64_t> ids(remove.begin(), remove.end());
    RETURN_IF_ERROR(index_->Remove(ids).status());
  }
  std::vector<int64_t> ids;
  std::vector<float> vecs;
  for (const auto& [id, v] : add) {
    if (index_->Contains(id)) continue;  // replay of what a snapshot holds
    ids.push_back(id);
    vecs.insert(vecs.end(), v->begin(), v->end());
  }
  if (!ids.empty()) RETURN_IF_ERROR(index_->Add(ids, vecs));
  return absl::OkStatus();
}

absl::Status VectorPart::Save(Env* env, const std::string& dir, uint64_t covered_seq,
                              const std::string& model_id, int keep) const {
  return index::WriteSnapshot(dir, *index_, covered_seq, model_id, keep, env).status();
}

absl::StatusOr<uint64_t> VectorPart::Load(const std::string& dir, const SnapshotKey& key) {
  ASSIGN_OR_RETURN(index::LoadedSnapshot snap, index::ReadLatestSnapshot(dir));
  const auto& m = snap.manifest;
  if (m.spec != index_->spec() || m.dimension != index_->dimension() ||
      m.metric != index_->metric() || m.model_id != key.model_id || m.covered_seq > key.last_seq) {
    spdlog::warn("snapshot {} does not match its collection; rebuilding", snap.path);
    return absl::NotFoundError("no matching snapshot");
  }
  index_ = std::move(snap.index);
  return m.covered_seq;
}

}  // namespace neodb::engine
