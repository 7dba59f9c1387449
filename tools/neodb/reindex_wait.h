#pragma once
// The wait for a reindex the client started (Admin.Reindex): poll
// Admin.ReindexStatus until the job leaves RUNNING, with its progress on a
// ProgressLine. One loop for `neodb reindex` and for `neodb adapt --apply` /
// `--rollback`, so both end the same way on the same server answers.

#include <chrono>
#include <functional>
#include <string>

#include "absl/status/statusor.h"
#include "neodb/v1/neodb.pb.h"
#include "tools/neodb/progress_line.h"

namespace neodb::cli {

// One ReindexStatus call for the collection being waited on.
using ReindexStatusPoll = std::function<absl::StatusOr<v1::ReindexStatusResponse>()>;

// How often a client asks: the 200 ms both `neodb reindex` and adapt polled
// at before they shared this loop.
inline constexpr std::chrono::milliseconds kReindexPollInterval{200};

// Polls every `interval` (the first poll at once) and shows
// "<label>: done / total" on `progress` while RUNNING, then the final state.
//  - DONE: the final response.
//  - FAILED: INTERNAL with the server's error.
//  - IDLE (or unset): ABORTED. The server set RUNNING before its Reindex call
//    returned, so an idle job means the server lost it, i.e. it restarted; the
//    collection is then wholly on one model (the swap is atomic), which the
//    message says how to find out.
//  - A poll that fails: its status, unchanged.
absl::StatusOr<v1::ReindexStatusResponse> WaitForReindex(
    const ReindexStatusPoll& poll, const std::string& collection, const std::string& label,
    ProgressLine& progress, std::chrono::milliseconds interval = kReindexPollInterval);

}  // namespace neodb::cli
