#pragma once
// A tiny checksummed file of F32 values for training checkpoints:
//   "NEODBF32" | uint64 count (LE) | count × float32 (LE) | uint64 FNV-1a of the data
// A truncated, padded or corrupted file is DATA_LOSS, never garbage state.

#include <string>
#include <vector>

#include "common/env.h"
#include "common/status_macros.h"

namespace neodb::encoder::train {

// Written atomically (a temp file renamed into place) through `env`.
absl::Status WriteFloatFile(const std::string& path, const std::vector<float>& values,
                            Env* env = Env::Default());
// REQUIRES nothing of the file; expected_count (when >= 0) must match.
absl::StatusOr<std::vector<float>> ReadFloatFile(const std::string& path,
                                                 int64_t expected_count = -1,
                                                 Env* env = Env::Default());

}  // namespace neodb::encoder::train
