#pragma once
// The small file, clock and verification helpers the adapt job's stages share.

#include <chrono>
#include <filesystem>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "adapt/server_side.h"
#include "common/env.h"
#include "nlohmann/json.hpp"

namespace neodb::adapt {

// Seconds from `since` to now (the job's timings).
double SecondsSince(std::chrono::steady_clock::time_point since);

// Replaces `path` with `text`, atomically (common/atomic_file.h).
absl::Status WriteTextFile(const std::filesystem::path& path, const std::string& text);

// The JSON in `path`, read through env: NOT_FOUND "cannot open <path>" when
// it does not exist, the Env's error naming the path when it cannot be read,
// INVALID_ARGUMENT when it is not JSON.
absl::StatusOr<nlohmann::json> ReadJsonFile(const std::filesystem::path& path,
                                            Env* env = Env::Default());

// "verify: N stored, N indexed, N foreign": what a swap's Verify counted.
std::string VerifyCounts(const VerifyReport& v);

// INTERNAL when `v` finds the collection on another model than `expected`
// after `what` ("the reindex", "the rollback").
absl::Status CheckVerifiedModel(const VerifyReport& v, const std::string& expected,
                                const std::string& what);

}  // namespace neodb::adapt
