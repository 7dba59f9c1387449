#include "common/env_pausing.h"

#include "absl/strings/str_cat.h"

namespace neodb {

void PausingEnv::PauseAt(uint64_t n, Hook hook) {
  std::lock_guard<std::mutex> lock(mu_);
  left_ = n;
  hook_ = std::move(hook);
}

void PausingEnv::Disarm() {
  std::lock_guard<std::mutex> lock(mu_);
  left_ = 0;
  hook_ = nullptr;
}

Fault PausingEnv::Decide(FileOp, std::string_view word, const std::string& path) {
  Hook hook;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (left_ == 0 || --left_ > 0) return Fault::kNone;
    hook.swap(hook_);
  }
  if (hook) hook(absl::StrCat(std::string(word), " ", path));
  return Fault::kNone;
}

}  // namespace neodb
