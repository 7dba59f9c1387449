#include "engine/change_replay.h"

#include <map>
#include <vector>

#include "common/status_macros.h"

namespace neodb::engine {
namespace {

constexpr size_t kChunk = 1024;

}  // namespace

absl::StatusOr<ReplayResult> ReplayChanges(const db::Store& store, uint64_t from_seq,
                                           uint64_t to_seq, const ReplaySink& sink) {
  ReplayResult result;
  if (to_seq < from_seq) return result;
  std::map<std::string, std::vector<Change>> pending;
  size_t buffered = 0;
  auto flush = [&]() -> absl::Status {
    for (auto& [name, changes] : pending) {
      if (!changes.empty()) RETURN_IF_ERROR(sink.apply(name, changes));
    }
    pending.clear();
    buffered = 0;
    return absl::OkStatus();
  };
  absl::Status s = store.ReadChangelog(from_seq, [&](const db::ChangelogRecord& r) -> absl::Status {
    if (r.seq > to_seq) return absl::CancelledError("done");
    if (result.first_seq == 0) result.first_seq = r.seq;
    if (!sink.wants(r.collection)) return absl::OkStatus();
    if (r.op == db::ChangeOp::kCreateCollection || r.op == db::ChangeOp::kDropCollection) {
      RETURN_IF_ERROR(flush());
      return sink.structural ? sink.structural(r) : absl::OkStatus();
    }
    Change c;
    c.seq = r.seq;
    c.removed = static_cast<int64_t>(r.previous_internal_id);
    if (r.op == db::ChangeOp::kUpsert && r.internal_id != 0) {
      auto doc = store.GetByInternalId(r.collection, r.internal_id);
      if (doc.ok()) {
        c.added = std::move(*doc);
      } else if (!absl::IsNotFound(doc.status())) {
        return doc.status();  // NOT_FOUND: overwritten or deleted later in the log
      }
    }
    pending[r.collection].push_back(std::move(c));
    ++result.records;
    if (++buffered >= kChunk) RETURN_IF_ERROR(flush());
    return absl::OkStatus();
  });
  if (!s.ok() && !absl::IsCancelled(s)) return s;
  RETURN_IF_ERROR(flush());
  return result;
}

}  // namespace neodb::engine
