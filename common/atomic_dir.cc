#include "common/atomic_dir.h"

#include "common/status_macros.h"

namespace neodb {
namespace {

std::string ParentOf(const std::string& path) {
  const size_t slash = path.find_last_of('/');
  if (slash == std::string::npos) return ".";
  return slash == 0 ? "/" : path.substr(0, slash);
}

}  // namespace

absl::Status InstallDirectory(Env* env, const std::string& staged, const std::string& target,
                              const std::string& aside) {
  RETURN_IF_ERROR(env->SyncDir(staged));
  bool moved_aside = false;
  if (!aside.empty() && FileExists(env, target)) {
    RETURN_IF_ERROR(env->DeleteTree(aside));
    RETURN_IF_ERROR(env->RenameFile(target, aside));
    moved_aside = true;
  }
  if (absl::Status s = env->RenameFile(staged, target); !s.ok()) {
    if (moved_aside) env->RenameFile(aside, target).IgnoreError();
    return s;
  }
  RETURN_IF_ERROR(env->SyncDir(ParentOf(target)));
  if (moved_aside) env->DeleteTree(aside).IgnoreError();  // the new one is in place
  return absl::OkStatus();
}

}  // namespace neodb
