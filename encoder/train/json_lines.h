#pragma once
// The JSON-lines reading every training input shares (pair files, adapt's
// pair files, distillation teachers): errors that name the file and line, one
// object per non-blank line, and whole-file reads.
#include <cstdint>
#include <functional>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "common/env.h"
#include "nlohmann/json.hpp"

namespace neodb::encoder::train {

// INVALID_ARGUMENT "name:line: what".
absl::Status LineError(const std::string& name, int64_t line, const std::string& what);

// Calls fn(object, line) for each non-blank line of `text` (lines count from
// 1), stopping at the first error. A line that is not JSON is "malformed
// JSON", one that is not an object "expected a JSON object, got <type>".
absl::Status ForEachJsonObjectLine(
    const std::string& text, const std::string& name,
    const std::function<absl::Status(const nlohmann::json& object, int64_t line)>& fn);

// The whole file, read through env: NOT_FOUND "cannot open <what> <path>",
// or the Env's error (naming the path) on a read error.
absl::StatusOr<std::string> ReadWholeFile(const std::string& path, const std::string& what,
                                          Env* env = Env::Default());

}  // namespace neodb::encoder::train
