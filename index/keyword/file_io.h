#pragma once
// Whole-file reads for keyword snapshots. (Writes go through the Env:
// common/atomic_file.h.)

#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace neodb::keyword {

// The whole file. NOT_FOUND if it does not exist, UNAVAILABLE on other errors.
absl::StatusOr<std::string> ReadWholeFile(const std::string& path);

}  // namespace neodb::keyword
