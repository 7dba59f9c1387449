#pragma once
// PausingEnv: an Env that forwards to another and, once armed, calls a hook
// just before its Nth write operation (create or open for append, append,
// sync, rename, delete, mkdir, directory sync, truncate; the numbering of
// fault_injector.h). The hook may
// block: the crash test's server prints a line and sleeps there, so the test
// can kill -9 it at an exact write point of a snapshot, synchronised on the
// line rather than on a guess at timing. Tests only.
//
// Thread-safe. The hook runs on the writing thread, outside any lock of this
// class, at most once per arming.

#include <cstdint>
#include <functional>
#include <mutex>
#include <string>

#include "common/env.h"

namespace neodb {

class PausingEnv : public Env {
 public:
  // "<op> <path>" of the write about to happen.
  using Hook = std::function<void(const std::string& what)>;

  // `target` is not owned and must outlive this.
  explicit PausingEnv(Env* target) : target_(target) {}

  // The `n`th write operation from now (n >= 1) calls `hook` before it runs.
  // Replaces an earlier arming.
  void PauseAt(uint64_t n, Hook hook);
  // Forgets the arming (the operation had fewer writes than n).
  void Disarm();

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

  // For the files it hands out: counts one write and pauses at the armed one.
  void Before(const char* op, const std::string& path);

 private:
  Env* target_;
  std::mutex mu_;
  uint64_t left_ = 0;  // writes until the pause; 0: disarmed
  Hook hook_;
};

}  // namespace neodb
