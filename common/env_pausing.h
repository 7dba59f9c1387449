#pragma once
// PausingEnv: an Env that forwards to another and, once armed, calls a hook
// just before its Nth write operation (the writes and their numbering are
// write_hook_env.h's: those of fault_injector.h). The hook may
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

#include "common/write_hook_env.h"

namespace neodb {

class PausingEnv : public WriteHookEnv {
 public:
  // "<op> <path>" of the write about to happen.
  using Hook = std::function<void(const std::string& what)>;

  // `target` is not owned and must outlive this.
  explicit PausingEnv(Env* target) : WriteHookEnv(target) {}

  // The `n`th write operation from now (n >= 1) calls `hook` before it runs.
  // Replaces an earlier arming.
  void PauseAt(uint64_t n, Hook hook);
  // Forgets the arming (the operation had fewer writes than n).
  void Disarm();

  // Counts the write and calls the hook at the armed one; never a fault.
  Fault Decide(FileOp op, std::string_view word, const std::string& path) override;

 private:
  std::mutex mu_;
  uint64_t left_ = 0;  // writes until the pause; 0: disarmed
  Hook hook_;
};

}  // namespace neodb
