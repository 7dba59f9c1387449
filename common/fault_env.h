#pragma once
// FaultInjectionEnv: an Env that forwards to another (normally
// Env::Default()) but asks a FaultInjector before every write operation and
// fails it as told (EIO, ENOSPC, a torn rename: write_hook_env.h says what
// each does). For in-process, deterministic fault tests; see
// common/fault_injector.h. Thread-safe.

#include "common/fault_injector.h"
#include "common/write_hook_env.h"

namespace neodb {

class FaultInjectionEnv : public WriteHookEnv {
 public:
  // Neither is owned; both must outlive this.
  FaultInjectionEnv(Env* target, FaultInjector* faults) : WriteHookEnv(target), faults_(faults) {}

  Fault Decide(FileOp op, std::string_view word, const std::string& path) override {
    return faults_->Next(op, path);
  }

 private:
  FaultInjector* faults_;
};

}  // namespace neodb
