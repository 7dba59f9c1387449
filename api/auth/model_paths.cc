#include "api/auth/model_paths.h"

#include <filesystem>
#include <optional>
#include <system_error>
#include <vector>

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

absl::Status NoModelPaths() {
  return absl::PermissionDeniedError(
      "this server takes no model paths over the API (start it with --models-dir DIR)");
}

// The canonical path of `requested` when it resolves to one of `own` (see
// ConfineModelPath); nullopt otherwise, whatever the reason, so that the
// answer says nothing about paths that are not the server's own.
std::optional<std::string> OwnModel(const std::string& models_dir, const std::string& requested,
                                    std::span<const std::string> own) {
  namespace fs = std::filesystem;
  fs::path p(requested);
  if (p.is_relative()) {
    if (models_dir.empty()) return std::nullopt;
    p = fs::path(models_dir) / p;
  }
  std::error_code ec;
  const fs::path real = fs::canonical(p, ec);
  if (ec) return std::nullopt;
  for (const std::string& o : own) {
    if (o.empty()) continue;
    const fs::path mine = fs::canonical(o, ec);
    if (!ec && mine == real) return real.string();
  }
  return std::nullopt;
}

}  // namespace

absl::StatusOr<std::string> ConfineModelPath(const std::string& models_dir,
                                             const std::string& requested,
                                             std::span<const std::string> own) {
  if (auto mine = OwnModel(models_dir, requested, own)) return *mine;
  if (models_dir.empty()) return NoModelPaths();
  return ConfineExisting(models_dir, requested, "model", "the models directory");
}

absl::StatusOr<std::string> ConfineFutureModelPath(const std::string& models_dir,
                                                   const std::string& requested,
                                                   std::span<const std::string> own) {
  namespace fs = std::filesystem;
  if (auto mine = OwnModel(models_dir, requested, own)) return *mine;
  if (models_dir.empty()) return NoModelPaths();
  std::error_code ec;
  fs::path p(requested);
  if (p.is_relative()) p = fs::absolute(models_dir, ec) / p;
  p = p.lexically_normal();
  if (!p.has_filename()) p = p.parent_path();  // a trailing '/'
  if (fs::exists(fs::symlink_status(p, ec))) return ConfineModelPath(models_dir, requested, own);
  // The part that does not exist yet holds no links and, normalised, no `..`.
  fs::path existing = p;
  std::vector<fs::path> missing;  // innermost first
  while (existing.has_relative_path() && !fs::exists(fs::symlink_status(existing, ec))) {
    missing.push_back(existing.filename());
    existing = existing.parent_path();
  }
  auto parent = ConfineExisting(models_dir, existing.string(),
                                absl::StrCat("model ", requested, ": its directory"),
                                "the models directory");
  if (!parent.ok()) {
    // Outside: name the path the client gave, not the parent it was checked by.
    if (absl::IsPermissionDenied(parent.status())) {
      return absl::PermissionDeniedError(absl::StrCat(
          "model ", requested, " is outside the models directory ",
          fs::canonical(models_dir, ec).string()));
    }
    return parent.status();
  }
  fs::path out(*parent);
  for (auto it = missing.rbegin(); it != missing.rend(); ++it) out /= *it;
  return out.string();
}

absl::StatusOr<std::string> ConfineExistingPath(const std::string& root,
                                                const std::string& requested) {
  if (root.empty()) {
    return absl::FailedPreconditionError(
        "this server reads no backups over the API (start it with --backup-dir DIR)");
  }
  return ConfineExisting(root, requested, "backup", "the backup directory");
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
