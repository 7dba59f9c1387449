#pragma once

#include <filesystem>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "nlohmann/json.hpp"

namespace neodb::encoder::train {

// The on-disk protocol shared by the training checkpoints (Trainer and MlmPretrainer): a
// checkpoint lives in <root>/checkpoint and is replaced atomically enough that a crash at any
// point leaves a loadable one. A new checkpoint is written into <root>/checkpoint.tmp, then the
// old <root>/checkpoint is renamed to checkpoint.old, checkpoint.tmp to checkpoint, and .old is
// removed. Only the directory handling lives here; what goes inside is the caller's format.

// Creates <root> if needed and an empty <root>/checkpoint.tmp (removing any stale one left by
// a crash). Returns the staging directory.
absl::StatusOr<std::filesystem::path> StageCheckpointDir(const std::filesystem::path& root);

// Writes `json_text` followed by a newline to <dir>/state.json.
absl::Status WriteCheckpointState(const std::filesystem::path& dir, const std::string& json_text);

// Swaps the staged <root>/checkpoint.tmp in as <root>/checkpoint. The previous checkpoint
// stays valid (as checkpoint or checkpoint.old) until the new one is in place.
absl::Status InstallCheckpointDir(const std::filesystem::path& root);

// The directory to resume from: <root>/checkpoint, or <root>/checkpoint.old when a crash
// between the two renames of InstallCheckpointDir left only that one. The result may hold no
// state.json at all; the caller reports that.
std::filesystem::path FindCheckpointDir(const std::filesystem::path& root);

// The state.json a --resume run starts from (in FindCheckpointDir(root)), parsed, and that
// directory in *dir. NOT_FOUND "--resume: no checkpoint in <root>" when there is none; DATA_LOSS
// "<dir>/state.json: <why>" when it is not JSON; other read errors as ReadFileToString's. What
// the JSON must hold is the caller's format.
absl::StatusOr<nlohmann::json> ReadCheckpointState(const std::filesystem::path& root,
                                                   std::filesystem::path* dir);

}  // namespace neodb::encoder::train
