#include "api/auth/model_paths.h"

#include <filesystem>
#include <system_error>

#include "absl/strings/str_cat.h"

namespace neodb::api {

namespace {

// `what` names the path in messages ("model"), `root_name` the root
// ("the models directory").
absl::StatusOr<std::string> ConfineExisting(const std::string& models_dir,
                                            const std::string& requested, absl::string_view what,
                                            absl::string_view root_name) {
  namespace fs = std::filesystem;
  std::error_code ec;
  const fs::path root = fs::canonical(models_dir, ec);
  if (ec) {
    return absl::FailedPreconditionError(
        absl::StrCat(root_name, " ", models_dir, ": ", ec.message()));
  }
  fs::path p(requested);
  if (p.is_relative()) p = root / p;
  const fs::path real = fs::canonical(p, ec);
  if (ec) {
    return absl::NotFoundError(absl::StrCat(what, " ", requested, ": ", ec.message()));
  }
  // Component-wise prefix test: /models2 is not inside /models.
  auto r = root.begin();
  auto q = real.begin();
  for (; r != root.end(); ++r, ++q) {
    if (q == real.end() || *q != *r) {
      return absl::PermissionDeniedError(
          absl::StrCat(what, " ", requested, " is outside ", root_name, " ", root.string()));
    }
  }
  return real.string();
}

}  // namespace

absl::StatusOr<std::string> ConfineModelPath(const std::string& models_dir,
                                             const std::string& requested) {
  if (models_dir.empty()) {
    return absl::PermissionDeniedError(
        "this server takes no model paths over the API (start it with --models-dir DIR)");
  }
  return ConfineExisting(models_dir, requested, "model", "the models directory");
}

absl::StatusOr<std::string> ConfineNewPath(const std::string& root, const std::string& requested) {
  namespace fs = std::filesystem;
  if (root.empty()) {
    return absl::FailedPreconditionError(
        "this server writes no backups over the API (start it with --backup-dir DIR)");
  }
  fs::path p(requested);
  if (p.is_relative()) p = fs::absolute(root) / p;
  p = p.lexically_normal();
  if (p.has_filename() == false) p = p.parent_path();
  const std::string name = p.filename().string();
  if (name.empty() || name == "." || name == "..") {
    return absl::InvalidArgumentError(absl::StrCat("'", requested, "' names no new directory"));
  }
  auto parent = ConfineExisting(root, p.parent_path().string(),
                                absl::StrCat("the parent of ", requested), "--backup-dir");
  if (!parent.ok()) return parent.status();
  const fs::path out = fs::path(*parent) / name;
  std::error_code ec;
  if (fs::exists(fs::symlink_status(out, ec))) {
    return absl::AlreadyExistsError(absl::StrCat(out.string(), " exists"));
  }
  return out.string();
}

}  // namespace neodb::api
