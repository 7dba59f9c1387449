#include "api/auth/model_paths.h"

#include <filesystem>
#include <system_error>

#include "absl/strings/str_cat.h"

namespace neodb::api {

absl::StatusOr<std::string> ConfineModelPath(const std::string& models_dir,
                                             const std::string& requested) {
  namespace fs = std::filesystem;
  if (models_dir.empty()) {
    return absl::PermissionDeniedError(
        "this server takes no model paths over the API (start it with --models-dir DIR)");
  }
  std::error_code ec;
  const fs::path root = fs::canonical(models_dir, ec);
  if (ec) {
    return absl::FailedPreconditionError(
        absl::StrCat("the models directory ", models_dir, ": ", ec.message()));
  }
  fs::path p(requested);
  if (p.is_relative()) p = root / p;
  const fs::path real = fs::canonical(p, ec);
  if (ec) {
    return absl::NotFoundError(absl::StrCat("model ", requested, ": ", ec.message()));
  }
  // Component-wise prefix test: /models2 is not inside /models.
  auto r = root.begin();
  auto q = real.begin();
  for (; r != root.end(); ++r, ++q) {
    if (q == real.end() || *q != *r) {
      return absl::PermissionDeniedError(
          absl::StrCat("model ", requested, " is outside the models directory ", root.string()));
    }
  }
  return real.string();
}

}  // namespace neodb::api
