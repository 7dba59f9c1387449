#include "api/stream_gate.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "spdlog/spdlog.h"

namespace neodb::api {

struct StreamGate::Slot::Entry {
  grpc::ServerContextBase* ctx;
  std::string key_name;
  absl::Time waiting_since;
  bool reading = false;
  bool cancelled = false;
};

StreamGate::StreamGate(const StreamGateOptions& options)
    : options_(options),
      max_per_key_(options.max_open_per_key > 0 ? options.max_open_per_key
                                                : std::max(1, options.max_open / 2)) {
  watcher_ = std::thread([this] { WatchLoop(); });
}

StreamGate::~StreamGate() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  watcher_.join();
}

absl::StatusOr<std::unique_ptr<StreamGate::Slot>> StreamGate::Admit(grpc::ServerContextBase* ctx,
                                                                    const std::string& key_name) {
  std::lock_guard<std::mutex> lock(mu_);
  if (static_cast<int>(open_.size()) >= options_.max_open) {
    ++refused_;
    return absl::ResourceExhaustedError(
        absl::StrCat("too many open ingest streams (", open_.size(),
                     ", the server's limit; "
                     "--max-open-streams); finish or close one, or retry later"));
  }
  if (!key_name.empty()) {
    int& n = open_per_key_[key_name];
    if (n >= max_per_key_) {
      ++refused_;
      return absl::ResourceExhaustedError(
          absl::StrCat("too many open ingest streams under API key '", key_name, "' (", n,
                       ", the server's per-key limit; --max-streams-per-key); finish or close one, "
                       "or retry later"));
    }
    ++n;
  }
  open_.push_front(Slot::Entry{ctx, key_name, absl::Now()});
  cv_.notify_all();  // the watcher may be waiting with nothing to watch
  return std::unique_ptr<Slot>(new Slot(this, open_.begin()));
}

StreamGate::Slot::~Slot() {
  std::lock_guard<std::mutex> lock(gate_->mu_);
  if (!it_->key_name.empty()) {
    auto k = gate_->open_per_key_.find(it_->key_name);
    if (--k->second == 0) gate_->open_per_key_.erase(k);
  }
  gate_->open_.erase(it_);
  if (gate_->open_.empty()) gate_->closed_cv_.notify_all();
}

void StreamGate::WaitUntilNoneOpen() {
  std::unique_lock<std::mutex> lock(mu_);
  closed_cv_.wait(lock, [this] { return open_.empty(); });
}

void StreamGate::Slot::WaitingForClient() {
  {
    std::lock_guard<std::mutex> lock(gate_->mu_);
    it_->reading = true;
    it_->waiting_since = absl::Now();
  }
  gate_->cv_.notify_all();  // the watcher recomputes its next wake-up
}

void StreamGate::Slot::Working() {
  std::lock_guard<std::mutex> lock(gate_->mu_);
  it_->reading = false;
}

void StreamGate::WatchLoop() {
  std::unique_lock<std::mutex> lock(mu_);
  while (!stop_) {
    const absl::Time now = absl::Now();
    absl::Time next = absl::InfiniteFuture();
    for (Slot::Entry& e : open_) {
      if (e.cancelled || !e.reading) continue;
      const absl::Time due = e.waiting_since + options_.idle_timeout;
      if (now >= due) {
        // TryCancel is thread-safe; the entry (and so ctx) lives until its
        // handler's Slot is destroyed, which needs mu_.
        e.ctx->TryCancel();
        e.cancelled = true;
        ++idle_cancelled_;
        spdlog::warn("cancelled an ingest stream from {}: no message for {}", e.ctx->peer(),
                     absl::FormatDuration(options_.idle_timeout));
      } else {
        next = std::min(next, due);
      }
    }
    if (next == absl::InfiniteFuture()) {
      cv_.wait(lock);
    } else {
      cv_.wait_until(lock, absl::ToChronoTime(next));
    }
  }
}

int StreamGate::open() const {
  std::lock_guard<std::mutex> lock(mu_);
  return static_cast<int>(open_.size());
}

int64_t StreamGate::refused() const {
  std::lock_guard<std::mutex> lock(mu_);
  return refused_;
}

int64_t StreamGate::idle_cancelled() const {
  std::lock_guard<std::mutex> lock(mu_);
  return idle_cancelled_;
}

}  // namespace neodb::api
