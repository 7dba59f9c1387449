#include "api/unary_reactor.h"

#include <mutex>

#include "absl/strings/str_cat.h"

namespace neodb::api {
namespace {

class UnaryReactor final : public grpc::ServerUnaryReactor {
 public:
  UnaryReactor(WorkerPool* pool, grpc::CallbackServerContext* ctx, UnaryWork work)
      : pool_(pool), ctx_(ctx), work_(std::move(work)) {}

  // Queues the work, or finishes the call when the queue is full. Called by
  // the method before it returns the reactor, so before any OnCancel.
  void Start() {
    std::lock_guard<std::mutex> lock(mu_);
    std::optional<WorkerPool::Ticket> ticket = pool_->TrySubmit([this] { Run(); });
    if (!ticket) {
      state_ = State::kFinished;
      Finish(UnaryQueueFull(*pool_));
      return;
    }
    ticket_ = *ticket;
  }

  void OnCancel() override {
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (state_ != State::kQueued) return;  // running (CancelOf stops it) or done
      state_ = State::kFinished;
    }
    // A task a worker took already sees kFinished and returns unrun.
    pool_->Withdraw(ticket_);
    Finish(grpc::Status(grpc::StatusCode::CANCELLED, "the call was cancelled before it started"));
  }

  void OnDone() override { delete this; }

 private:
  enum class State { kQueued, kRunning, kFinished };

  void Run() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (state_ != State::kQueued) return;  // dropped by OnCancel
      state_ = State::kRunning;
    }
    // Cancelled, but OnCancel has not run yet: drop it here.
    grpc::Status s = ctx_->IsCancelled()
                         ? grpc::Status(grpc::StatusCode::CANCELLED,
                                        "the call was cancelled before it started")
                         : work_();
    {
      std::lock_guard<std::mutex> lock(mu_);
      state_ = State::kFinished;
    }
    Finish(std::move(s));  // OnDone may delete this from here on
  }

  WorkerPool* const pool_;
  grpc::CallbackServerContext* const ctx_;
  const UnaryWork work_;
  std::mutex mu_;
  State state_ = State::kQueued;
  WorkerPool::Ticket ticket_ = 0;
};

}  // namespace

grpc::Status UnaryQueueFull(const WorkerPool& pool) {
  return grpc::Status(
      grpc::StatusCode::RESOURCE_EXHAUSTED,
      absl::StrCat("server busy: ", pool.max_queued(), " calls already wait for its ",
                   pool.threads(), " workers (--max-queued-calls, --threads); retry later"));
}

grpc::ServerUnaryReactor* StartUnary(WorkerPool* pool, grpc::CallbackServerContext* ctx,
                                     UnaryWork work) {
  auto* reactor = new UnaryReactor(pool, ctx, std::move(work));
  reactor->Start();
  return reactor;
}

}  // namespace neodb::api
