#include "api/engine/embed_batcher.h"

#include <chrono>

#include "absl/strings/str_cat.h"

namespace neodb::engine {

struct EmbedBatcher::Request {
  std::vector<std::string> texts;
  encoder::EmbedOptions options;
  absl::Time deadline;
  int64_t tokens = 0;
  bool abandoned = false;  // the caller stopped waiting
  bool done = false;
  absl::StatusOr<std::vector<encoder::Embedding>> result = absl::UnknownError("not run");
};

namespace {

bool SameOptions(const encoder::EmbedOptions& a, const encoder::EmbedOptions& b) {
  return a.pooling == b.pooling && a.normalize == b.normalize && a.overflow == b.overflow &&
         a.prefix == b.prefix;
}

std::chrono::system_clock::time_point ToChrono(absl::Time t) {
  if (t == absl::InfiniteFuture()) return std::chrono::system_clock::time_point::max();
  return absl::ToChronoTime(t);
}

}  // namespace

EmbedBatcher::EmbedBatcher(Embedder* embedder, const EmbedBatcherOptions& options)
    : embedder_(embedder), options_(options) {
  worker_ = std::thread([this] { WorkerLoop(); });
}

EmbedBatcher::~EmbedBatcher() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
    for (auto& r : queue_) {
      r->done = true;
      r->result = absl::UnavailableError("server is shutting down");
    }
    queue_.clear();
    queued_texts_ = 0;
  }
  work_cv_.notify_all();
  done_cv_.notify_all();
  worker_.join();
}

absl::StatusOr<std::vector<encoder::Embedding>> EmbedBatcher::Embed(
    std::vector<std::string> texts, const encoder::EmbedOptions& options, absl::Time deadline) {
  NEODB_CHECK(!texts.empty());
  auto req = std::make_shared<Request>();
  req->options = options;
  req->deadline = deadline;
  for (const std::string& t : texts) {
    auto n = embedder_->CountTokens(options.prefix, t);
    req->tokens += n.ok() ? *n : 1;
  }
  req->texts = std::move(texts);
  const int64_t n = static_cast<int64_t>(req->texts.size());

  std::unique_lock<std::mutex> lock(mu_);
  if (stop_) return absl::UnavailableError("server is shutting down");
  if (absl::Now() >= deadline) {
    ++stats_.expired;
    return absl::DeadlineExceededError("deadline passed before the texts were queued");
  }
  // A request larger than the whole queue is admitted only into an empty
  // queue, so it cannot starve yet never grows memory past one request.
  if (queued_texts_ + n > options_.max_queue_texts && queued_texts_ > 0) {
    ++stats_.rejected;
    return absl::ResourceExhaustedError(absl::StrCat("embedding queue is full (", queued_texts_,
                                                     " texts waiting, limit ",
                                                     options_.max_queue_texts, "); retry later"));
  }
  queue_.push_back(req);
  queued_texts_ += n;
  stats_.queued_texts = queued_texts_;
  work_cv_.notify_one();

  if (!done_cv_.wait_until(lock, ToChrono(deadline), [&] { return req->done; })) {
    req->abandoned = true;
    return absl::DeadlineExceededError("deadline exceeded while waiting for the encoder");
  }
  return std::move(req->result);
}

std::vector<std::shared_ptr<EmbedBatcher::Request>> EmbedBatcher::TakeBatch(
    std::unique_lock<std::mutex>& lock) {
  std::vector<std::shared_ptr<Request>> batch;
  int64_t tokens = 0;
  const absl::Time wait_until = absl::Now() + options_.max_wait;
  while (true) {
    // Take every queued request that fits, same options as the first.
    for (auto it = queue_.begin(); it != queue_.end();) {
      Request& r = **it;
      if (!batch.empty() && !SameOptions(r.options, batch.front()->options)) {
        ++it;
        continue;
      }
      if (!batch.empty() && tokens + r.tokens > options_.max_batch_tokens) break;
      tokens += r.tokens;
      queued_texts_ -= static_cast<int64_t>(r.texts.size());
      batch.push_back(std::move(*it));
      it = queue_.erase(it);
    }
    stats_.queued_texts = queued_texts_;
    if (tokens >= options_.max_batch_tokens || stop_ || absl::Now() >= wait_until) break;
    work_cv_.wait_until(lock, ToChrono(wait_until));
    if (stop_) break;
  }
  return batch;
}

void EmbedBatcher::WorkerLoop() {
  std::unique_lock<std::mutex> lock(mu_);
  while (true) {
    work_cv_.wait(lock, [&] { return stop_ || !queue_.empty(); });
    if (stop_) return;
    std::vector<std::shared_ptr<Request>> batch = TakeBatch(lock);
    if (stop_) {
      for (auto& r : batch) {
        r->done = true;
        r->result = absl::UnavailableError("server is shutting down");
      }
      done_cv_.notify_all();
      return;
    }
    // Skip work nobody waits for any more.
    const absl::Time now = absl::Now();
    std::vector<std::shared_ptr<Request>> live;
    for (auto& r : batch) {
      if (r->abandoned || now >= r->deadline) {
        ++stats_.expired;
        r->done = true;
        r->result = absl::DeadlineExceededError("deadline passed before the texts were embedded");
      } else {
        live.push_back(std::move(r));
      }
    }
    if (live.empty()) {
      done_cv_.notify_all();
      continue;
    }
    std::vector<std::string> texts;
    for (auto& r : live)
      for (auto& t : r->texts) texts.push_back(std::move(t));
    const encoder::EmbedOptions options = live.front()->options;

    lock.unlock();
    const absl::Time start = absl::Now();
    absl::StatusOr<std::vector<encoder::Embedding>> result = embedder_->Embed(texts, options);
    // One bad text must not fail the others: on a batch error with several
    // requests, rerun each request alone so each gets its own answer.
    std::vector<absl::StatusOr<std::vector<encoder::Embedding>>> per_request;
    if (!result.ok() && live.size() > 1) {
      size_t off = 0;
      for (auto& r : live) {
        std::vector<std::string> mine(texts.begin() + off, texts.begin() + off + r->texts.size());
        off += r->texts.size();
        per_request.push_back(embedder_->Embed(mine, options));
      }
    }
    const double secs = absl::ToDoubleSeconds(absl::Now() - start);
    lock.lock();

    stats_.encoder_seconds += secs;
    ++stats_.batches;
    size_t off = 0;
    for (size_t i = 0; i < live.size(); ++i) {
      Request& r = *live[i];
      const size_t n = r.texts.size();
      r.done = true;
      if (!per_request.empty()) {
        r.result = std::move(per_request[i]);
      } else if (!result.ok()) {
        r.result = result.status();
      } else {
        std::vector<encoder::Embedding> mine(std::make_move_iterator(result->begin() + off),
                                             std::make_move_iterator(result->begin() + off + n));
        r.result = std::move(mine);
      }
      off += n;
      if (r.result.ok()) {
        stats_.embedded_texts += static_cast<int64_t>(n);
        for (const auto& e : *r.result) stats_.embedded_tokens += e.num_tokens;
      }
    }
    done_cv_.notify_all();
  }
}

EmbedBatcherStats EmbedBatcher::stats() const {
  std::lock_guard<std::mutex> lock(mu_);
  return stats_;
}

}  // namespace neodb::engine
