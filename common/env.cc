// What every Env shares, written over its virtual primitives only, so the
// tree copies work (and are fault-injected) on the POSIX Env, the memory Env
// and the twins alike.
#include <cerrno>
#include <cstring>
#include <filesystem>

#include "absl/strings/str_cat.h"
#include "common/env.h"
#include "common/status_macros.h"

namespace neodb {
namespace {

std::string Join(const std::string& dir, const std::string& name) {
  return (std::filesystem::path(dir) / name).string();
}

}  // namespace

absl::Status ErrnoStatus(int err, std::string_view what, const std::string& path) {
  std::string message = absl::StrCat(std::string(what), " ", path, ": ", std::strerror(err));
  if (err == ENOSPC || err == EDQUOT) {
    return absl::ResourceExhaustedError(absl::StrCat(message, " (the disk is full)"));
  }
  if (err == ENOENT) return absl::NotFoundError(message);
  return absl::UnavailableError(message);
}

absl::StatusOr<std::string> ReadFileToString(Env* env, const std::string& path) {
  ASSIGN_OR_RETURN(std::unique_ptr<SequentialFile> in, env->NewSequentialFile(path));
  std::string out;
  char buf[1 << 16];
  for (;;) {
    ASSIGN_OR_RETURN(const size_t n, in->Read(sizeof buf, buf));
    if (n == 0) return out;
    out.append(buf, n);
  }
}

absl::StatusOr<std::string> ReadFileToString(Env* env, const std::string& path,
                                             uint64_t max_bytes) {
  absl::StatusOr<FileKind> kind = env->GetFileKind(path);
  if (absl::IsNotFound(kind.status())) {
    return absl::NotFoundError(absl::StrCat(path, " does not exist"));
  }
  RETURN_IF_ERROR(kind.status());
  if (*kind != FileKind::kFile) {
    return absl::InvalidArgumentError(absl::StrCat(path, " is not a regular file"));
  }
  ASSIGN_OR_RETURN(const uint64_t size, env->GetFileSize(path));
  if (size > max_bytes) {
    return absl::InvalidArgumentError(
        absl::StrCat(path, " is ", size, " bytes, more than the limit of ", max_bytes));
  }
  ASSIGN_OR_RETURN(std::unique_ptr<SequentialFile> in, env->NewSequentialFile(path));
  std::string out;
  out.reserve(static_cast<size_t>(size));
  char buf[1 << 16];
  for (;;) {
    ASSIGN_OR_RETURN(const size_t n, in->Read(sizeof buf, buf));
    if (n == 0) return out;
    if (out.size() + n > max_bytes) {
      return absl::InvalidArgumentError(
          absl::StrCat(path, " grew past the limit of ", max_bytes, " bytes while read"));
    }
    out.append(buf, n);
  }
}

bool FileExists(Env* env, const std::string& path) { return env->GetFileKind(path).ok(); }

absl::Status Env::CopyFile(const std::string& from, const std::string& to) {
  ASSIGN_OR_RETURN(std::unique_ptr<SequentialFile> in, NewSequentialFile(from));
  ASSIGN_OR_RETURN(std::unique_ptr<WritableFile> out, NewWritableFile(to));
  std::string buf(1 << 16, '\0');
  for (;;) {
    ASSIGN_OR_RETURN(const size_t n, in->Read(buf.size(), buf.data()));
    if (n == 0) break;
    RETURN_IF_ERROR(out->Append(std::string_view(buf.data(), n)));
  }
  RETURN_IF_ERROR(out->Sync());
  return out->Close();
}

absl::Status Env::CopyTree(const std::string& from, const std::string& to) {
  RETURN_IF_ERROR(CreateDir(to));
  ASSIGN_OR_RETURN(const std::vector<std::string> names, GetChildren(from));
  for (const std::string& name : names) {
    const std::string src = Join(from, name), dst = Join(to, name);
    // Symlinks are followed (a model cache may link its files): the copy
    // holds what they point at.
    ASSIGN_OR_RETURN(const FileKind kind, GetFileKind(src, /*follow_symlinks=*/true));
    if (kind == FileKind::kDirectory) {
      RETURN_IF_ERROR(CopyTree(src, dst));
    } else if (kind == FileKind::kFile) {
      RETURN_IF_ERROR(CopyFile(src, dst));
    } else {
      return absl::FailedPreconditionError(
          absl::StrCat(src, " is not a regular file or directory"));
    }
  }
  // The entries (files, subdirectories) durable in their directory; the
  // subdirectories synced theirs before returning.
  return SyncDir(to);
}

absl::Status Env::DeleteTree(const std::string& path) {
  // Not following symlinks: a link is removed, never what it points at.
  absl::StatusOr<FileKind> kind = GetFileKind(path, /*follow_symlinks=*/false);
  if (absl::IsNotFound(kind.status())) return absl::OkStatus();
  RETURN_IF_ERROR(kind.status());
  if (*kind != FileKind::kDirectory) {
    absl::Status s = DeleteFile(path);
    return absl::IsNotFound(s) ? absl::OkStatus() : s;
  }
  ASSIGN_OR_RETURN(const std::vector<std::string> names, GetChildren(path));
  for (const std::string& name : names) RETURN_IF_ERROR(DeleteTree(Join(path, name)));
  return DeleteDir(path);
}

}  // namespace neodb
