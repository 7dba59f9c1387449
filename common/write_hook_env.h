#pragma once
// WriteHookEnv: an Env that forwards every call to another and offers each
// write operation to a hook first (Decide), which says whether it runs or
// fails with a fault. The two test Envs are such hooks: FaultInjectionEnv
// asks a FaultInjector (fault_env.h), PausingEnv calls a test's hook before
// the Nth write (env_pausing.h). One forwarding layer, so a new Env call is
// forwarded and counted in one place for both.
//
// The writes, each offered once (the numbering of fault_injector.h):
// create and open for append (kCreate), append, sync, truncate, rename
// (offered with the target path), delete of a file or a directory (kDelete),
// mkdir, directory sync. Reads, listings and stats pass through unoffered.
//
// What a fault does: the operation fails with EIO or ENOSPC marked
// "[injected]" and does not happen, except a failed append, which writes the
// first half of its data first (as write(2) may), and a torn rename
// (Fault::kTornRename), which truncates the file to half its size and then
// renames it and reports success: what a crash on a disk that reordered
// writes can leave.
//
// Thread-safe when Decide is.

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "common/env.h"
#include "common/fault_injector.h"

namespace neodb {

class WriteHookEnv : public Env {
 public:
  absl::StatusOr<std::unique_ptr<WritableFile>> NewWritableFile(const std::string& path) override;
  absl::StatusOr<std::unique_ptr<WritableFile>> NewAppendableFile(
      const std::string& path) override;
  absl::Status TruncateFile(const std::string& path, uint64_t size) override;
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

  // What happens to the write `op` on `path` (`word`: the operation as a
  // test reads it, e.g. "open-append", "rmdir"). Fault::kNone: it runs.
  virtual Fault Decide(FileOp op, std::string_view word, const std::string& path) = 0;

 protected:
  // `target` is not owned and must outlive this.
  explicit WriteHookEnv(Env* target) : target_(target) {}

 private:
  // Opens through `open` unless Decide says otherwise; the file it hands out
  // offers its appends and syncs too.
  template <typename Open>
  absl::StatusOr<std::unique_ptr<WritableFile>> OpenFile(std::string_view word,
                                                         const std::string& path, Open open);

  Env* target_;
};

// The error an injected fault reports (what the POSIX Env would return).
absl::Status InjectedError(Fault fault, std::string_view what, const std::string& path);

}  // namespace neodb
