#pragma once
// FaultInjectionEnv: an Env that forwards to another (normally
// Env::Default()) but asks a FaultInjector before every write operation and
// fails it as told (EIO, ENOSPC, a torn rename). For in-process,
// deterministic fault tests; see common/fault_injector.h. Thread-safe.

#include "common/env.h"
#include "common/fault_injector.h"

namespace neodb {

class FaultInjectionEnv : public Env {
 public:
  // Neither is owned; both must outlive this.
  FaultInjectionEnv(Env* target, FaultInjector* faults) : target_(target), faults_(faults) {}

  absl::StatusOr<std::unique_ptr<WritableFile>> NewWritableFile(const std::string& path) override;
  absl::StatusOr<std::unique_ptr<WritableFile>> NewAppendableFile(
      const std::string& path) override;
  absl::Status TruncateFile(const std::string& path, uint64_t size) override;
  // Reads, listings and stats are forwarded as they are: no fault, no count.
  absl::StatusOr<std::unique_ptr<SequentialFile>> NewSequentialFile(
      const std::string& path) override {
    return target_->NewSequentialFile(path);
  }
  absl::StatusOr<std::vector<std::string>> GetChildren(const std::string& dir) override {
    return target_->GetChildren(dir);
  }
  absl::StatusOr<FileKind> GetFileKind(const std::string& path, bool follow_symlinks) override {
    return target_->GetFileKind(path, follow_symlinks);
  }
  absl::StatusOr<uint64_t> GetFileSize(const std::string& path) override {
    return target_->GetFileSize(path);
  }
  absl::Status RenameFile(const std::string& from, const std::string& to) override;
  absl::Status DeleteFile(const std::string& path) override;
  absl::Status DeleteDir(const std::string& path) override;
  absl::Status CreateDir(const std::string& path) override;
  absl::Status SyncDir(const std::string& path) override;

 private:
  Env* target_;
  FaultInjector* faults_;
};

// The error an injected fault reports (what the POSIX Env would return).
absl::Status InjectedError(Fault fault, std::string_view what, const std::string& path);

}  // namespace neodb
