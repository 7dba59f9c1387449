#include "encoder/train/checkpoint_dir.h"

#include <fstream>
#include <system_error>

#include "absl/strings/str_cat.h"

namespace neodb::encoder::train {

namespace fs = std::filesystem;

absl::StatusOr<fs::path> StageCheckpointDir(const fs::path& root) {
  const fs::path tmp = root / "checkpoint.tmp";
  std::error_code ec;
  fs::create_directories(root, ec);
  fs::remove_all(tmp, ec);
  if (!fs::create_directories(tmp, ec)) {
    return absl::InternalError(absl::StrCat("cannot create ", tmp.string(), ": ", ec.message()));
  }
  return tmp;
}

absl::Status WriteCheckpointState(const fs::path& dir, const std::string& json_text) {
  std::ofstream out(dir / "state.json");
  out << json_text << "\n";
  if (!out) return absl::InternalError(absl::StrCat("error writing ", dir.string()));
  return absl::OkStatus();
}

absl::Status InstallCheckpointDir(const fs::path& root) {
  const fs::path tmp = root / "checkpoint.tmp";
  const fs::path final_dir = root / "checkpoint";
  const fs::path old = root / "checkpoint.old";
  std::error_code ec;
  fs::remove_all(old, ec);
  if (fs::exists(final_dir)) fs::rename(final_dir, old, ec);
  if (ec) return absl::InternalError(absl::StrCat("cannot move old checkpoint: ", ec.message()));
  fs::rename(tmp, final_dir, ec);
  if (ec) return absl::InternalError(absl::StrCat("cannot install checkpoint: ", ec.message()));
  fs::remove_all(old, ec);
  return absl::OkStatus();
}

fs::path FindCheckpointDir(const fs::path& root) {
  const fs::path dir = root / "checkpoint";
  if (!fs::exists(dir / "state.json") && fs::exists(root / "checkpoint.old" / "state.json")) {
    return root / "checkpoint.old";
  }
  return dir;
}

}  // namespace neodb::encoder::train
