#include "encoder/train/checkpoint_dir.h"

#include <system_error>

#include "absl/strings/str_cat.h"
#include "common/atomic_dir.h"
#include "common/atomic_file.h"
#include "common/env.h"
#include "common/status_macros.h"

namespace neodb::encoder::train {

namespace fs = std::filesystem;

// Every write goes through the Env (common/env.h); the files of a
// checkpoint are durable before the rename that installs it.
absl::StatusOr<fs::path> StageCheckpointDir(const fs::path& root) {
  Env* env = Env::Default();
  const fs::path tmp = root / "checkpoint.tmp";
  RETURN_IF_ERROR(env->CreateDir(root.string()));
  RETURN_IF_ERROR(env->DeleteTree(tmp.string()));
  RETURN_IF_ERROR(env->CreateDir(tmp.string()));
  return tmp;
}

absl::Status WriteCheckpointState(const fs::path& dir, const std::string& json_text) {
  return WriteFileAtomically(Env::Default(), (dir / "state.json").string(), {json_text, "\n"});
}

absl::Status InstallCheckpointDir(const fs::path& root) {
  // The previous checkpoint waits at checkpoint.old until the new one is in
  // place; FindCheckpointDir falls back to it after a crash in between.
  return InstallDirectory(Env::Default(), (root / "checkpoint.tmp").string(),
                          (root / "checkpoint").string(), (root / "checkpoint.old").string());
}

fs::path FindCheckpointDir(const fs::path& root) {
  const fs::path dir = root / "checkpoint";
  Env* env = Env::Default();
  if (!FileExists(env, (dir / "state.json").string()) &&
      FileExists(env, (root / "checkpoint.old" / "state.json").string())) {
    return root / "checkpoint.old";
  }
  return dir;
}

absl::StatusOr<nlohmann::json> ReadCheckpointState(const fs::path& root, fs::path* dir) {
  *dir = FindCheckpointDir(root);
  const std::string path = (*dir / "state.json").string();
  absl::StatusOr<std::string> text = ReadFileToString(Env::Default(), path);
  if (absl::IsNotFound(text.status())) {
    return absl::NotFoundError(absl::StrCat("--resume: no checkpoint in ", root.string()));
  }
  RETURN_IF_ERROR(text.status());
  try {
    return nlohmann::json::parse(*text);
  } catch (const nlohmann::json::exception& e) {
    return absl::DataLossError(absl::StrCat(path, ": ", e.what()));
  }
}

}  // namespace neodb::encoder::train
