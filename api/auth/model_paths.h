#pragma once
// Model paths a client names over the API (ReindexRequest.model_dir) open
// files on the server, so they are confined to the one models directory the
// operator configured (`neodb serve --models-dir`).

#include <span>
#include <string>

#include "absl/status/statusor.h"

namespace neodb::api {

// The canonical path `requested` names inside `models_dir`. `requested` may be
// relative (to models_dir) or absolute. Both are resolved through every
// symlink first, so `..` and links that lead out are refused.
//   models_dir empty         -> PERMISSION_DENIED (model paths over the API are off)
//   requested does not exist -> NOT_FOUND
//   resolves outside         -> PERMISSION_DENIED
// `own`: model directories the server chose itself, not a client: its default
// model (--model) and the collection's current and previous models (each was
// the default, or passed this check, when the collection went onto it, and
// the server reopens them at every start anyway). A `requested` that resolves
// to one of them is allowed wherever it lies and without a models directory
// (a rollback onto the default model); that names no file the server would
// not open anyway. Empty entries, and entries that no longer resolve, are
// skipped. A relative `requested` is taken from models_dir only.
absl::StatusOr<std::string> ConfineModelPath(const std::string& models_dir,
                                             const std::string& requested,
                                             std::span<const std::string> own = {});

// As ConfineModelPath for a model directory that may not exist yet (one a
// client is about to write, for a dry run): when `requested` exists, exactly
// ConfineModelPath; otherwise the nearest existing directory above it (after
// `..` is taken lexically) must resolve inside models_dir, and the path it
// would have is returned. Advisory: the reindex itself checks the real path.
absl::StatusOr<std::string> ConfineFutureModelPath(const std::string& models_dir,
                                                   const std::string& requested,
                                                   std::span<const std::string> own = {});

// The path for a new entry `requested` inside `root` (the server's
// --backup-dir): its parent must resolve inside root as ConfineModelPath
// says, its last component be a plain name, and nothing exist there yet.
//   root empty -> FAILED_PRECONDITION (not configured); outside -> PERMISSION_DENIED;
//   exists -> ALREADY_EXISTS.
absl::StatusOr<std::string> ConfineNewPath(const std::string& root, const std::string& requested);

// The canonical path of an existing entry `requested` inside `root` (a backup
// to read back): root empty -> FAILED_PRECONDITION; missing -> NOT_FOUND;
// resolving outside root (symlinks and `..` followed) -> PERMISSION_DENIED.
absl::StatusOr<std::string> ConfineExistingPath(const std::string& root,
                                                const std::string& requested);

}  // namespace neodb::api
