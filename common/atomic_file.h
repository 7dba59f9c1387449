#pragma once
// Whole-file replacement that a crash cannot tear: write `path`.tmp, fsync
// it, rename it over `path`, fsync the directory. A crash leaves the old file
// or the new one. On any error the temp file is removed (so a failed write
// on a full disk does not keep the space it took) and the error returned;
// `path` is then untouched.

#include <initializer_list>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "common/env.h"

namespace neodb {

absl::Status WriteFileAtomically(Env* env, const std::string& path,
                                 std::initializer_list<std::string_view> parts);

// As above with an explicit temp path (snapshots name theirs so that a
// crashed writer's leftovers can be recognised and pruned).
absl::Status WriteFileAtomically(Env* env, const std::string& path, const std::string& temp,
                                 std::initializer_list<std::string_view> parts);

}  // namespace neodb
