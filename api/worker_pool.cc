#include "api/worker_pool.h"

#include "common/status_macros.h"

namespace neodb::api {

WorkerPool::WorkerPool(int threads, size_t max_queued) : max_queued_(max_queued) {
  NEODB_CHECK(threads >= 1);
  threads_.reserve(static_cast<size_t>(threads));
  for (int i = 0; i < threads; ++i) threads_.emplace_back([this] { Loop(); });
}

WorkerPool::~WorkerPool() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  for (std::thread& t : threads_) t.join();
}

WorkerPool::Ticket WorkerPool::QueueLocked(std::function<void()> task) {
  const Ticket ticket = next_ticket_++;
  tasks_.emplace_hint(tasks_.end(), ticket, std::move(task));
  return ticket;
}

void WorkerPool::Submit(std::function<void()> task) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    QueueLocked(std::move(task));
  }
  cv_.notify_one();
}

std::optional<WorkerPool::Ticket> WorkerPool::TrySubmit(std::function<void()> task) {
  Ticket ticket;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (max_queued_ > 0 && tasks_.size() >= max_queued_) {
      ++refused_;
      return std::nullopt;
    }
    ticket = QueueLocked(std::move(task));
  }
  cv_.notify_one();
  return ticket;
}

bool WorkerPool::Withdraw(Ticket ticket) {
  std::function<void()> task;  // destroyed outside the lock
  std::lock_guard<std::mutex> lock(mu_);
  auto it = tasks_.find(ticket);
  if (it == tasks_.end()) return false;
  task = std::move(it->second);
  tasks_.erase(it);
  ++withdrawn_;
  return true;
}

size_t WorkerPool::queued() const {
  std::lock_guard<std::mutex> lock(mu_);
  return tasks_.size();
}

int64_t WorkerPool::refused() const {
  std::lock_guard<std::mutex> lock(mu_);
  return refused_;
}

int64_t WorkerPool::withdrawn() const {
  std::lock_guard<std::mutex> lock(mu_);
  return withdrawn_;
}

void WorkerPool::Loop() {
  std::unique_lock<std::mutex> lock(mu_);
  while (true) {
    cv_.wait(lock, [this] { return stop_ || !tasks_.empty(); });
    if (tasks_.empty()) return;  // stopping, and nothing left to run
    std::function<void()> task = std::move(tasks_.begin()->second);
    tasks_.erase(tasks_.begin());
    lock.unlock();
    task();
    task = nullptr;  // its captures go before the lock is taken again
    lock.lock();
  }
}

}  // namespace neodb::api
