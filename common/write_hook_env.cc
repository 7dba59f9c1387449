#include "common/write_hook_env.h"

#include <cerrno>

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"

namespace neodb {

absl::Status InjectedError(Fault fault, std::string_view what, const std::string& path) {
  absl::Status s = ErrnoStatus(fault == Fault::kNoSpace ? ENOSPC : EIO, what, path);
  return absl::Status(s.code(), absl::StrCat(s.message(), " [injected]"));
}

namespace {

class HookedWritableFile : public WritableFile {
 public:
  HookedWritableFile(std::unique_ptr<WritableFile> target, std::string path, WriteHookEnv* env)
      : target_(std::move(target)), path_(std::move(path)), env_(env) {}
  absl::Status Append(std::string_view data) override {
    Fault f = env_->Decide(FileOp::kAppend, "append", path_);
    if (f == Fault::kNone) return target_->Append(data);
    // A failed write may have written part of the data, as write(2) may.
    target_->Append(data.substr(0, data.size() / 2)).IgnoreError();
    return InjectedError(f, "cannot write", path_);
  }
  absl::Status Sync() override {
    Fault f = env_->Decide(FileOp::kSync, "sync", path_);
    if (f != Fault::kNone) return InjectedError(f, "cannot fsync", path_);
    return target_->Sync();
  }
  absl::Status Close() override { return target_->Close(); }

 private:
  std::unique_ptr<WritableFile> target_;
  std::string path_;
  WriteHookEnv* env_;
};

}  // namespace

template <typename Open>
absl::StatusOr<std::unique_ptr<WritableFile>> WriteHookEnv::OpenFile(std::string_view word,
                                                                     const std::string& path,
                                                                     Open open) {
  Fault f = Decide(FileOp::kCreate, word, path);
  if (f != Fault::kNone) return InjectedError(f, "cannot create", path);
  ASSIGN_OR_RETURN(std::unique_ptr<WritableFile> file, open());
  return std::unique_ptr<WritableFile>(new HookedWritableFile(std::move(file), path, this));
}

absl::StatusOr<std::unique_ptr<WritableFile>> WriteHookEnv::NewWritableFile(
    const std::string& path) {
  return OpenFile("create", path, [&] { return target_->NewWritableFile(path); });
}

absl::StatusOr<std::unique_ptr<WritableFile>> WriteHookEnv::NewAppendableFile(
    const std::string& path) {
  return OpenFile("open-append", path, [&] { return target_->NewAppendableFile(path); });
}

absl::Status WriteHookEnv::TruncateFile(const std::string& path, uint64_t size) {
  Fault f = Decide(FileOp::kTruncate, "truncate", path);
  if (f != Fault::kNone) return InjectedError(f, "cannot truncate", path);
  return target_->TruncateFile(path, size);
}

absl::Status WriteHookEnv::RenameFile(const std::string& from, const std::string& to) {
  Fault f = Decide(FileOp::kRename, "rename", to);
  if (f == Fault::kTornRename) {
    absl::StatusOr<uint64_t> size = target_->GetFileSize(from);
    if (size.ok()) target_->TruncateFile(from, *size / 2).IgnoreError();
    return target_->RenameFile(from, to);
  }
  if (f != Fault::kNone) return InjectedError(f, "cannot rename into", to);
  return target_->RenameFile(from, to);
}

absl::Status WriteHookEnv::DeleteFile(const std::string& path) {
  Fault f = Decide(FileOp::kDelete, "delete", path);
  if (f != Fault::kNone) return InjectedError(f, "cannot delete", path);
  return target_->DeleteFile(path);
}

absl::Status WriteHookEnv::DeleteDir(const std::string& path) {
  Fault f = Decide(FileOp::kDelete, "rmdir", path);
  if (f != Fault::kNone) return InjectedError(f, "cannot delete directory", path);
  return target_->DeleteDir(path);
}

absl::Status WriteHookEnv::CreateDir(const std::string& path) {
  Fault f = Decide(FileOp::kCreateDir, "mkdir", path);
  if (f != Fault::kNone) return InjectedError(f, "cannot create directory", path);
  return target_->CreateDir(path);
}

absl::Status WriteHookEnv::SyncDir(const std::string& path) {
  Fault f = Decide(FileOp::kSyncDir, "syncdir", path);
  if (f != Fault::kNone) return InjectedError(f, "cannot fsync directory", path);
  return target_->SyncDir(path);
}

}  // namespace neodb
