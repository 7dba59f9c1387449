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
