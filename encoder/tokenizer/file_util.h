#pragma once
// Small file helpers for tokenizer loading and saving.

#include <cstddef>
#include <string>
#include <string_view>

#include "common/status_macros.h"

namespace neodb::encoder {

// Reads a whole regular file. NOT_FOUND when it does not exist;
// INVALID_ARGUMENT when it is not a regular file or exceeds `max_bytes`.
absl::StatusOr<std::string> ReadWholeFile(const std::string& path, size_t max_bytes);

// Writes `contents` to `path` through a temporary file in the same
// directory and a rename, so readers never see a partial file.
absl::Status WriteFileAtomically(const std::string& path, std::string_view contents);

bool IsRegularFile(const std::string& path);

}  // namespace neodb::encoder
