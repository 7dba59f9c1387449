#include "common/fault_env.h"

#include <cerrno>

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"

namespace neodb {

absl::Status InjectedError(Fault fault, std::string_view what, const std::string& path) {
  absl::Status s = ErrnoStatus(fault == Fault::kNoSpace ? ENOSPC : EIO, what, path);
  return absl::Status(s.code(), absl::StrCat(s.message(), " [injected]"));
}

namespace {

class FaultWritableFile : public WritableFile {
 public:
  FaultWritableFile(std::unique_ptr<WritableFile> target, std::string path, FaultInjector* faults)
      : target_(std::move(target)), path_(std::move(path)), faults_(faults) {}
  absl::Status Append(std::string_view data) override {
    Fault f = faults_->Next(FileOp::kAppend, path_);
    if (f == Fault::kNone) return target_->Append(data);
    // A failed write may have written part of the data, as write(2) may.
    target_->Append(data.substr(0, data.size() / 2)).IgnoreError();
    return InjectedError(f, "cannot write", path_);
  }
  absl::Status Sync() override {
    Fault f = faults_->Next(FileOp::kSync, path_);
    if (f != Fault::kNone) return InjectedError(f, "cannot fsync", path_);
    return target_->Sync();
  }
  absl::Status Close() override { return target_->Close(); }

 private:
  std::unique_ptr<WritableFile> target_;
  std::string path_;
  FaultInjector* faults_;
};

}  // namespace

absl::StatusOr<std::unique_ptr<WritableFile>> FaultInjectionEnv::NewWritableFile(
    const std::string& path) {
  Fault f = faults_->Next(FileOp::kCreate, path);
  if (f != Fault::kNone) return InjectedError(f, "cannot create", path);
  ASSIGN_OR_RETURN(std::unique_ptr<WritableFile> file, target_->NewWritableFile(path));
  return std::unique_ptr<WritableFile>(new FaultWritableFile(std::move(file), path, faults_));
}

absl::StatusOr<std::unique_ptr<WritableFile>> FaultInjectionEnv::NewAppendableFile(
    const std::string& path) {
  Fault f = faults_->Next(FileOp::kCreate, path);
  if (f != Fault::kNone) return InjectedError(f, "cannot create", path);
  ASSIGN_OR_RETURN(std::unique_ptr<WritableFile> file, target_->NewAppendableFile(path));
  return std::unique_ptr<WritableFile>(new FaultWritableFile(std::move(file), path, faults_));
}

absl::Status FaultInjectionEnv::TruncateFile(const std::string& path, uint64_t size) {
  Fault f = faults_->Next(FileOp::kTruncate, path);
  if (f != Fault::kNone) return InjectedError(f, "cannot truncate", path);
  return target_->TruncateFile(path, size);
}

absl::Status FaultInjectionEnv::RenameFile(const std::string& from, const std::string& to) {
  Fault f = faults_->Next(FileOp::kRename, to);
  if (f == Fault::kTornRename) {
    // The rename happens and reports success, but the file lost its tail:
    // what a crash on a disk that reordered writes can leave. Readers must
    // notice (checksums) and fall back.
    absl::StatusOr<uint64_t> size = target_->GetFileSize(from);
    if (size.ok()) target_->TruncateFile(from, *size / 2).IgnoreError();
    return target_->RenameFile(from, to);
  }
  if (f != Fault::kNone) return InjectedError(f, "cannot rename into", to);
  return target_->RenameFile(from, to);
}

absl::Status FaultInjectionEnv::DeleteFile(const std::string& path) {
  Fault f = faults_->Next(FileOp::kDelete, path);
  if (f != Fault::kNone) return InjectedError(f, "cannot delete", path);
  return target_->DeleteFile(path);
}

absl::Status FaultInjectionEnv::DeleteDir(const std::string& path) {
  Fault f = faults_->Next(FileOp::kDelete, path);
  if (f != Fault::kNone) return InjectedError(f, "cannot delete directory", path);
  return target_->DeleteDir(path);
}

absl::Status FaultInjectionEnv::CreateDir(const std::string& path) {
  Fault f = faults_->Next(FileOp::kCreateDir, path);
  if (f != Fault::kNone) return InjectedError(f, "cannot create directory", path);
  return target_->CreateDir(path);
}

absl::Status FaultInjectionEnv::SyncDir(const std::string& path) {
  Fault f = faults_->Next(FileOp::kSyncDir, path);
  if (f != Fault::kNone) return InjectedError(f, "cannot fsync directory", path);
  return target_->SyncDir(path);
}

}  // namespace neodb
