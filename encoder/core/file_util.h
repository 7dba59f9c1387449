#pragma once
// Small file helpers for loading checkpoint and tokenizer files. Reading
// goes through an Env (common/env.h), Env::Default() unless a test passes
// another; writing through common/atomic_file.h (over the same Env).

#include <cstddef>
#include <string>
#include <string_view>

#include "common/env.h"
#include "common/status_macros.h"

namespace neodb::encoder {

// Reads a whole regular file. NOT_FOUND when it does not exist;
// INVALID_ARGUMENT when it is not a regular file or exceeds `max_bytes`.
// ReadFileToString's bounded form (common/env.h), with its messages.
absl::StatusOr<std::string> ReadWholeFile(const std::string& path, size_t max_bytes,
                                          Env* env = Env::Default());

bool IsRegularFile(const std::string& path, Env* env = Env::Default());

// The directory of the running executable (from /proc/self/exe, no trailing
// '/'); empty when it cannot be read.
std::string ExecutableDir();

}  // namespace neodb::encoder
