#include "common/atomic_file.h"

#include <filesystem>
#include <memory>

#include "common/status_macros.h"

namespace neodb {
namespace {

absl::Status WriteAndSync(Env* env, const std::string& path,
                          std::initializer_list<std::string_view> parts) {
  ASSIGN_OR_RETURN(std::unique_ptr<WritableFile> f, env->NewWritableFile(path));
  for (std::string_view part : parts) RETURN_IF_ERROR(f->Append(part));
  RETURN_IF_ERROR(f->Sync());
  return f->Close();
}

}  // namespace

absl::Status WriteFileAtomically(Env* env, const std::string& path,
                                 std::initializer_list<std::string_view> parts) {
  return WriteFileAtomically(env, path, path + ".tmp", parts);
}

absl::Status WriteFileAtomically(Env* env, const std::string& path, const std::string& temp,
                                 std::initializer_list<std::string_view> parts) {
  absl::Status s = WriteAndSync(env, temp, parts);
  if (s.ok()) s = env->RenameFile(temp, path);
  if (!s.ok()) {
    env->DeleteFile(temp).IgnoreError();  // may not exist; the error that matters is s
    return s;
  }
  const std::string dir = std::filesystem::path(path).parent_path().string();
  return env->SyncDir(dir.empty() ? "." : dir);
}

}  // namespace neodb
