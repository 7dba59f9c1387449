#include "cluster/background_loop.h"

#include <utility>

namespace neodb::cluster {

BackgroundLoop::~BackgroundLoop() { Stop(); }

void BackgroundLoop::Start(std::function<void()> body) {
  std::lock_guard<std::mutex> lock(mu_);
  if (thread_.joinable()) return;
  stop_ = false;
  thread_ = std::thread(std::move(body));
}

void BackgroundLoop::Stop() {
  std::thread t;
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
    t = std::move(thread_);
  }
  cv_.notify_all();
  if (t.joinable()) t.join();
}

bool BackgroundLoop::stopping() const {
  std::lock_guard<std::mutex> lock(mu_);
  return stop_;
}

bool BackgroundLoop::running() const {
  std::lock_guard<std::mutex> lock(mu_);
  return thread_.joinable();
}

bool BackgroundLoop::SleepFor(absl::Duration d) {
  std::unique_lock<std::mutex> lock(mu_);
  cv_.wait_for(lock, absl::ToChronoMilliseconds(d), [this] { return stop_; });
  return !stop_;
}

}  // namespace neodb::cluster
