#pragma once
// Model paths a client names over the API (ReindexRequest.model_dir) open
// files on the server, so they are confined to the one models directory the
// operator configured (`neodb serve --models-dir`).

#include <string>

#include "absl/status/statusor.h"

namespace neodb::api {

// The canonical path `requested` names inside `models_dir`. `requested` may be
// relative (to models_dir) or absolute. Both are resolved through every
// symlink first, so `..` and links that lead out are refused.
//   models_dir empty         -> PERMISSION_DENIED (model paths over the API are off)
//   requested does not exist -> NOT_FOUND
//   resolves outside         -> PERMISSION_DENIED
absl::StatusOr<std::string> ConfineModelPath(const std::string& models_dir,
                                             const std::string& requested);

// The path for a new entry `requested` inside `root` (the server's
// --backup-dir): its parent must resolve inside root as ConfineModelPath
// says, its last component be a plain name, and nothing exist there yet.
//   root empty -> FAILED_PRECONDITION (not configured); outside -> PERMISSION_DENIED;
//   exists -> ALREADY_EXISTS.
absl::StatusOr<std::string> ConfineNewPath(const std::string& root, const std::string& requested);

}  // namespace neodb::api
