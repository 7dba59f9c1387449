#pragma once
// Whole-file I/O for keyword snapshots, with index/snapshot.cc's durability
// rule: write a temp file, fsync it, rename it over the target, fsync the
// directory, so a crash leaves the old file or the new one, never a torn one.

#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace neodb::keyword {

// Writes `parts` concatenated to `path` atomically (see above); the temp file
// is `path` + ".tmp" and is removed on failure. UNAVAILABLE on an I/O error.
absl::Status WriteFileAtomically(const std::string& path,
                                 std::initializer_list<std::string_view> parts);

// The whole file. NOT_FOUND if it does not exist, UNAVAILABLE on other errors.
absl::StatusOr<std::string> ReadWholeFile(const std::string& path);

}  // namespace neodb::keyword
