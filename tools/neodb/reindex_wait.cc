#include "tools/neodb/reindex_wait.h"

#include <thread>

#include "absl/strings/str_cat.h"

namespace neodb::cli {

absl::StatusOr<v1::ReindexStatusResponse> WaitForReindex(const ReindexStatusPoll& poll,
                                                         const std::string& collection,
                                                         const std::string& label,
                                                         ProgressLine& progress,
                                                         std::chrono::milliseconds interval) {
  while (true) {
    absl::StatusOr<v1::ReindexStatusResponse> st = poll();
    if (!st.ok()) return st.status();
    const std::string text = absl::StrCat(label, ": ", st->done(), " / ", st->total(),
                                          st->committed() ? " (committed)" : "");
    if (st->state() == v1::ReindexStatusResponse::RUNNING) {
      progress.Update(text);
      std::this_thread::sleep_for(interval);
      continue;
    }
    progress.Finish(text);
    switch (st->state()) {
      case v1::ReindexStatusResponse::DONE:
        return st;
      case v1::ReindexStatusResponse::FAILED:
        return absl::InternalError(
            absl::StrCat("reindex of ", collection, " failed: ", st->error()));
      default:
        return absl::AbortedError(absl::StrCat(
            "the server no longer reports a reindex of ", collection,
            " (it restarted?); the collection is wholly on one model: `neodb collections describe ",
            collection, "` shows which"));
    }
  }
}

}  // namespace neodb::cli
