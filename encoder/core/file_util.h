#pragma once
// Small file helpers for loading checkpoint and tokenizer files. Writing
// goes through common/atomic_file.h (over common/env.h).

#include <cstddef>
#include <string>
#include <string_view>

#include "common/status_macros.h"

namespace neodb::encoder {

// Reads a whole regular file. NOT_FOUND when it does not exist;
// INVALID_ARGUMENT when it is not a regular file or exceeds `max_bytes`.
absl::StatusOr<std::string> ReadWholeFile(const std::string& path, size_t max_bytes);

bool IsRegularFile(const std::string& path);

// The directory of the running executable (from /proc/self/exe, no trailing
// '/'); empty when it cannot be read.
std::string ExecutableDir();

}  // namespace neodb::encoder
