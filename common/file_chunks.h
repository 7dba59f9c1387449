#pragma once
// ForEachFileChunk: a file read through an Env from its start to its end, a
// chunk at a time, each chunk handed to a callback. The loop behind every
// whole-file digest (a backup's SHA-256, a training file's XXH3 in
// lineage.json): the file is seen once and never held whole.
//
// Thread-safety: as the Env's; `fn` runs on the calling thread.

#include <cstddef>
#include <string>
#include <string_view>

#include "absl/functional/function_ref.h"
#include "absl/status/status.h"
#include "common/env.h"

namespace neodb {

// Calls fn(chunk) for each successive run of at most `chunk_bytes` bytes of
// `path`, in order (never for an empty file); a chunk's memory is reused
// once fn returns. NOT_FOUND "cannot read <path>" when the file does not
// exist; the Env's error when it cannot be opened otherwise; DATA_LOSS
// "error reading <path>: <why>" when a read fails part way.
// REQUIRES: chunk_bytes > 0.
absl::Status ForEachFileChunk(Env* env, const std::string& path, size_t chunk_bytes,
                              absl::FunctionRef<void(std::string_view)> fn);

}  // namespace neodb
