#include "encoder/core/file_util.h"

#include <unistd.h>

namespace neodb::encoder {

bool IsRegularFile(const std::string& path, Env* env) {
  absl::StatusOr<FileKind> kind = env->GetFileKind(path);
  return kind.ok() && *kind == FileKind::kFile;
}

absl::StatusOr<std::string> ReadWholeFile(const std::string& path, size_t max_bytes, Env* env) {
  return ReadFileToString(env, path, max_bytes);
}

std::string ExecutableDir() {
  char exe[4096];
  const ssize_t n = ::readlink("/proc/self/exe", exe, sizeof(exe) - 1);
  if (n <= 0) return "";
  const std::string self(exe, static_cast<size_t>(n));
  const size_t slash = self.rfind('/');
  return slash == std::string::npos ? "" : self.substr(0, slash);
}

}  // namespace neodb::encoder
