#include "engine/side_task.h"

#include <algorithm>

#include "common/status_macros.h"

namespace neodb::engine {

struct SideHelpers::Job {
  enum class State { kOffered, kRunning, kDone, kClaimed };
  std::function<void()> fn;
  State state = State::kOffered;
  std::condition_variable done_cv;  // kRunning -> kDone, under SideHelpers::mu_
};

SideHelpers::SideHelpers(int threads) : threads_(threads) { NEODB_CHECK(threads >= 1); }

SideHelpers::~SideHelpers() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  for (std::thread& t : workers_) t.join();
}

SideHelpers& SideHelpers::ForSearch() {
  static SideHelpers* helpers = new SideHelpers(
      std::clamp(static_cast<int>(std::thread::hardware_concurrency()) - 1, 1, 8));
  return *helpers;
}

bool SideHelpers::Offer(const std::shared_ptr<Job>& job) {
  std::lock_guard<std::mutex> lock(mu_);
  if (stop_) return false;
  if (static_cast<size_t>(idle_) > queue_.size()) {
    queue_.push_back(job);
    cv_.notify_one();
    return true;
  }
  if (started_ < threads_) {  // a helper more, started for this job
    ++started_;
    queue_.push_back(job);
    workers_.emplace_back([this] { Loop(); });
    return true;
  }
  return false;
}

void SideHelpers::Loop() {
  std::unique_lock<std::mutex> lock(mu_);
  while (true) {
    ++idle_;
    cv_.wait(lock, [&] { return stop_ || !queue_.empty(); });
    --idle_;
    if (stop_) return;
    std::shared_ptr<Job> job = std::move(queue_.front());
    queue_.pop_front();
    if (job->state != Job::State::kOffered) continue;  // its caller ran it
    job->state = Job::State::kRunning;
    lock.unlock();
    job->fn();
    lock.lock();
    job->state = Job::State::kDone;
    job->done_cv.notify_all();
  }
}

SideTask::SideTask(SideHelpers* helpers, std::function<void()> fn) : helpers_(helpers) {
  job_ = std::make_shared<SideHelpers::Job>();
  job_->fn = std::move(fn);
  if (!helpers_->Offer(job_)) job_->state = SideHelpers::Job::State::kClaimed;
}

SideTask::~SideTask() { Join(); }

void SideTask::Join() {
  if (joined_) return;
  joined_ = true;
  using State = SideHelpers::Job::State;
  {
    std::unique_lock<std::mutex> lock(helpers_->mu_);
    if (job_->state == State::kOffered) {
      job_->state = State::kClaimed;  // the helper that pops it drops it
    } else if (job_->state != State::kClaimed) {
      job_->done_cv.wait(lock, [&] { return job_->state == State::kDone; });
      return;
    }
  }
  job_->fn();
}

}  // namespace neodb::engine
