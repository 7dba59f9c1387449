#pragma once
// Publishing a directory whole: it is written under a temporary name beside
// its target, then renamed into place, so a reader (or a restart after a
// crash) sees the old directory or the new one, never half of one. One path
// for every directory the project publishes this way (trained models,
// converted models, training checkpoints).

#include <string>

#include "absl/status/status.h"
#include "common/env.h"

namespace neodb {

// Installs `staged` at `target`: syncs `staged` (the files in it must be
// durable already, e.g. written with WriteFileAtomically), renames it to
// `target` and syncs `target`'s parent, through `env`.
// `aside` empty: `target` must not exist, or be an empty directory (the
// rename replaces it). `aside` set: an existing `target` is first renamed to
// `aside` (a leftover `aside` is removed before), put back if the second
// rename fails, and removed once the new one is in place; a crash between
// the two renames leaves the old directory whole at `aside`.
absl::Status InstallDirectory(Env* env, const std::string& staged, const std::string& target,
                              const std::string& aside = "");

}  // namespace neodb
