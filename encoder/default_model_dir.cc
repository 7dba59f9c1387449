#include "encoder/default_model_dir.h"

#include <cstdlib>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "encoder/core/file_util.h"

namespace neodb::encoder {

absl::StatusOr<std::string> FindDefaultModelDir() {
  const char* env = std::getenv("NEODB_DEFAULT_MODEL");
  if (env != nullptr && env[0] != '\0') {
    if (IsRegularFile(std::string(env) + "/config.json")) return std::string(env);
    return absl::NotFoundError(absl::StrCat("NEODB_DEFAULT_MODEL=", env,
                                            " has no config.json; point it at a model directory"));
  }
  std::vector<std::string> candidates;
  const std::string exe_dir = ExecutableDir();
  if (!exe_dir.empty()) {
    candidates.push_back(exe_dir + "/default_model");
    candidates.push_back(exe_dir + "/../share/neodb/default_model");
  }
  candidates.push_back(NEODB_SOURCE_DEFAULT_MODEL);
  for (const std::string& dir : candidates) {
    if (IsRegularFile(dir + "/config.json")) return dir;
  }
  return absl::NotFoundError(
      absl::StrCat("no --model given and no default model found (looked in ",
                   absl::StrJoin(candidates, ", "),
                   "); pass --model DIR or set NEODB_DEFAULT_MODEL"));
}

absl::StatusOr<std::string> ResolveModelDir(const std::string& model_dir) {
  if (!model_dir.empty()) return model_dir;
  return FindDefaultModelDir();
}

}  // namespace neodb::encoder
