#include "engine/embed_batcher.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <numeric>

#include "absl/cleanup/cleanup.h"
#include "absl/strings/str_cat.h"

namespace neodb::engine {

struct EmbedBatcher::Request {
  encoder::FramedTexts framed;
  encoder::EmbedOptions options;
  EmbedLane lane = EmbedLane::kBulk;
  absl::Time deadline;
  CancelCheck cancelled;
  int64_t texts = 0;
  int64_t next = 0;            // first sequence not yet taken by the worker
  // Deficit round robin: tokens earned and not yet spent, and the pass that
  // last credited them (see TakeBatch).
  int64_t credit = 0;
  uint64_t credited_pass = 0;
  int64_t pooled = 0;          // sequences whose vectors are in `vectors`
  std::vector<float> vectors;  // [sequences, dim], filled as passes finish
  bool in_ring = false;
  bool abandoned = false;  // the caller stopped waiting
  bool abandoned_by_cancel = false;
  bool done = false;
  absl::StatusOr<std::vector<encoder::Embedding>> result = absl::UnknownError("not run");

  int64_t sequences() const { return static_cast<int64_t>(framed.sequences.size()); }
  int64_t next_length() const { return static_cast<int64_t>(framed.sequences[next].size()); }
};

struct EmbedBatcher::Slice {
  std::shared_ptr<Request> request;
  int64_t begin = 0;
  int64_t end = 0;
};

namespace {

std::chrono::system_clock::time_point ToChrono(absl::Time t) {
  if (t == absl::InfiniteFuture()) return std::chrono::system_clock::time_point::max();
  return absl::ToChronoTime(t);
}

// The cap of bulk passes before any has been timed: small, so the first
// query under ingest does not wait for a full max_batch_tokens pass.
constexpr int64_t kFirstBulkPassTokens = 512;

}  // namespace

EmbedBatcher::EmbedBatcher(Embedder* embedder, const EmbedBatcherOptions& options)
    : embedder_(embedder), options_(options) {
  worker_ = std::thread([this] { WorkerLoop(); });
}

EmbedBatcher::~EmbedBatcher() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
    for (Ring& ring : rings_) {
      for (auto& r : ring) Finish(*r, absl::UnavailableError("server is shutting down"));
      ring.clear();
    }
    queued_texts_ = 0;
  }
  work_cv_.notify_all();
  done_cv_.notify_all();
  worker_.join();
}

absl::StatusOr<std::vector<encoder::Embedding>> EmbedBatcher::Embed(
    std::vector<std::string> texts, const encoder::EmbedOptions& options, absl::Time deadline,
    const CancelCheck& cancelled, EmbedLane lane) {
  NEODB_CHECK(!texts.empty());
  const int lane_index = static_cast<int>(lane);
  if (absl::Now() >= deadline) {
    std::lock_guard<std::mutex> lock(mu_);
    ++stats_.expired;
    return absl::DeadlineExceededError("deadline passed before the texts were queued");
  }
  // Counted as arriving until it is queued (or fails): a pass that is not
  // full waits for such callers, and for no one else.
  {
    std::lock_guard<std::mutex> lock(mu_);
    ++arriving_[lane_index];
  }
  bool arrived = false;
  auto arrival = absl::Cleanup([&] {
    if (arrived) return;
    std::lock_guard<std::mutex> lock(mu_);
    --arriving_[lane_index];
    work_cv_.notify_one();  // a worker waiting for this caller stops waiting
  });
  auto req = std::make_shared<Request>();
  req->options = options;
  req->lane = lane;
  req->deadline = deadline;
  req->cancelled = cancelled;
  req->texts = static_cast<int64_t>(texts.size());
  // Tokenizing happens here, on the caller's thread, in parallel with the
  // encoder; the worker only runs passes.
  ASSIGN_OR_RETURN(req->framed, embedder_->Frame(texts, options));
  texts = {};  // the ids are all we need from here on
  NEODB_CHECK(req->framed.texts() == req->texts);
  req->vectors.resize(static_cast<size_t>(req->sequences()) * embedder_->dim());

  std::unique_lock<std::mutex> lock(mu_);
  --arriving_[lane_index];
  arrived = true;
  if (stop_) return absl::UnavailableError("server is shutting down");
  // A request larger than the whole queue is admitted only into an empty
  // queue, so it cannot starve yet never grows memory past one request.
  if (queued_texts_ + req->texts > options_.max_queue_texts && queued_texts_ > 0) {
    ++stats_.rejected;
    work_cv_.notify_one();  // in case the worker's pass waits for this caller
    return absl::ResourceExhaustedError(absl::StrCat("embedding queue is full (", queued_texts_,
                                                     " texts waiting, limit ",
                                                     options_.max_queue_texts, "); retry later"));
  }
  // New requests go ahead of those already served once (and behind other
  // new ones): a short query waits for at most the work items in flight.
  Ring& mine = ring(lane);
  mine.insert(std::find_if(mine.begin(), mine.end(),
                           [](const std::shared_ptr<Request>& r) { return r->next > 0; }),
              req);
  req->in_ring = true;
  if (lane == EmbedLane::kQuery) last_query_ = Now();
  queued_texts_ += req->texts;
  stats_.queued_texts = queued_texts_;
  work_cv_.notify_one();

  while (!req->done) {
    absl::Time until = deadline;
    if (cancelled) until = std::min(deadline, absl::Now() + kCancelPoll);
    done_cv_.wait_until(lock, ToChrono(until), [&] { return req->done; });
    if (req->done) break;
    if (cancelled && cancelled()) {
      req->abandoned = true;
      req->abandoned_by_cancel = true;
      work_cv_.notify_one();  // let the worker drop the rest now
      return absl::CancelledError("the request was cancelled while its texts were embedded");
    }
    if (absl::Now() >= deadline) {
      req->abandoned = true;
      work_cv_.notify_one();
      return absl::DeadlineExceededError("deadline exceeded while waiting for the encoder");
    }
  }
  return std::move(req->result);
}

void EmbedBatcher::Finish(Request& r, absl::StatusOr<std::vector<encoder::Embedding>> result) {
  r.done = true;
  if (result.ok()) {
    stats_.embedded_texts += r.texts;
    for (const auto& e : *result) stats_.embedded_tokens += e.num_tokens;
  }
  r.result = std::move(result);
  // The caller keeps the request alive until it returns; free the bulk now.
  r.framed = {};
  r.vectors = {};
}

void EmbedBatcher::DropDead() {
  const absl::Time now = absl::Now();
  for (Ring& ring : rings_) {
    for (auto it = ring.begin(); it != ring.end();) {
      Request& r = **it;
      // cancelled() only while the caller is inside Embed (not abandoned, not
      // done): that is what keeps the objects it looks at alive.
      bool by_cancel = r.abandoned_by_cancel;
      bool dead = r.abandoned || now >= r.deadline;
      if (!dead && r.cancelled && r.cancelled()) dead = by_cancel = true;
      if (!dead) {
        ++it;
        continue;
      }
      stats_.skipped_sequences += r.sequences() - r.next;
      queued_texts_ -= r.texts;
      r.in_ring = false;
      if (by_cancel) {
        ++stats_.cancelled;
        Finish(r, absl::CancelledError("the request was cancelled while its texts were embedded"));
      } else {
        ++stats_.expired;
        Finish(r, absl::DeadlineExceededError("deadline passed before the texts were embedded"));
      }
      it = ring.erase(it);
    }
  }
  stats_.queued_texts = queued_texts_;
}

EmbedLane EmbedBatcher::NextLane() const {
  const bool queries = !rings_[static_cast<int>(EmbedLane::kQuery)].empty();
  const bool bulk = !rings_[static_cast<int>(EmbedLane::kBulk)].empty();
  // Both waiting: take turns, so neither lane waits for more than one pass
  // of the other.
  if (queries && bulk) {
    return last_lane_ == EmbedLane::kQuery ? EmbedLane::kBulk : EmbedLane::kQuery;
  }
  return queries ? EmbedLane::kQuery : EmbedLane::kBulk;
}

absl::Time EmbedBatcher::Now() const {
  return options_.pass_clock ? options_.pass_clock() : absl::Now();
}

int64_t EmbedBatcher::BulkPassTokens() const {
  if (options_.max_bulk_pass <= absl::ZeroDuration()) return options_.max_batch_tokens;
  // With no query about, a pass may run kIdlePassFactor times longer: nearly
  // the throughput of full passes for an import, while the first query after
  // a quiet spell still waits a bounded time.
  const absl::Duration budget = Now() - last_query_ > kQueryRecency
                                    ? kIdlePassFactor * options_.max_bulk_pass
                                    : options_.max_bulk_pass;
  const int64_t cap =
      bulk_tokens_per_second_ > 0
          ? std::llround(bulk_tokens_per_second_ * absl::ToDoubleSeconds(budget))
          : kFirstBulkPassTokens;
  // At least one token: a pass always takes its first sequence whole.
  return std::clamp<int64_t>(cap, 1, options_.max_batch_tokens);
}

std::vector<EmbedBatcher::Slice> EmbedBatcher::TakeBatch(std::unique_lock<std::mutex>& lock) {
  std::vector<Slice> batch;
  int64_t tokens = 0;
  const absl::Time wait_until = absl::Now() + options_.max_wait;
  DropDead();
  if (rings_empty()) return batch;
  // One lane per pass, chosen once: requests of the other lane that arrive
  // while this pass fills wait for the next one.
  const EmbedLane lane = NextLane();
  stats_.bulk_pass_tokens = BulkPassTokens();
  const int64_t cap =
      lane == EmbedLane::kQuery ? options_.max_batch_tokens : stats_.bulk_pass_tokens;
  Ring& ring = this->ring(lane);
  ++passes_taken_;
  while (true) {
    // Deficit round robin over tokens: every request in the ring earns an
    // equal share of the pass once per pass and spends it on its sequences,
    // so requests share the encoder by tokens whatever their sequence
    // lengths, also when a pass holds less than one sequence of each. Within
    // a pass, requests go in ring order; those served go to the back.
    const int64_t quantum =
        std::max<int64_t>(1, cap / std::max<int64_t>(1, static_cast<int64_t>(ring.size())));
    for (auto& rp : ring) {
      if (rp->credited_pass == passes_taken_) continue;
      rp->credit += quantum;
      rp->credited_pass = passes_taken_;
    }
    if (batch.empty() && !ring.empty()) {
      // No request may have earned its next sequence yet: add at once the
      // rounds of credit it takes the first one to (plain DRR would run them
      // as empty rounds), so a pass never goes empty.
      int64_t rounds = std::numeric_limits<int64_t>::max();
      for (auto& rp : ring) {
        const int64_t need = rp->next_length() - rp->credit;
        rounds = std::min(rounds, need <= 0 ? 0 : (need + quantum - 1) / quantum);
      }
      for (auto& rp : ring) rp->credit += rounds * quantum;
    }
    Ring waiting, served;
    for (auto& rp : ring) {
      Request& r = *rp;
      const bool in_batch =
          std::any_of(batch.begin(), batch.end(), [&](const Slice& s) { return s.request == rp; });
      const bool other_pooling =
          !batch.empty() && r.options.pooling != batch.front().request->options.pooling;
      if (in_batch || other_pooling || tokens >= cap) {
        waiting.push_back(std::move(rp));
        continue;
      }
      Slice s{rp, r.next, r.next};
      while (s.end < r.sequences()) {
        const int64_t len = static_cast<int64_t>(r.framed.sequences[s.end].size());
        if (len > r.credit) break;
        // The pass's first sequence always goes (it may be longer than the cap).
        if (!(batch.empty() && s.end == s.begin) && tokens + len > cap) break;
        tokens += len;
        r.credit -= len;
        ++s.end;
      }
      if (s.end == s.begin) {  // not earned yet, or no room left in this pass
        waiting.push_back(std::move(rp));
        continue;
      }
      r.next = s.end;
      ++stats_.work_items;
      batch.push_back(s);
      if (r.next == r.sequences()) {  // all taken: it leaves the queue
        r.in_ring = false;
        queued_texts_ -= r.texts;
      } else {
        served.push_back(std::move(rp));
      }
    }
    ring = std::move(waiting);
    for (auto& rp : served) ring.push_back(std::move(rp));
    stats_.queued_texts = queued_texts_;
    if (stop_ || tokens >= cap || absl::Now() >= wait_until) break;
    // Hold the pass only for callers of this lane on their way in: a lone
    // request never waits for company that is not coming.
    if (arriving_[static_cast<int>(lane)] == 0) break;
    work_cv_.wait_until(lock, ToChrono(wait_until));
    if (stop_) break;
    DropDead();
  }
  if (!batch.empty()) last_lane_ = lane;
  return batch;
}

void EmbedBatcher::RunBatch(std::vector<Slice> batch, std::unique_lock<std::mutex>& lock) {
  const int dim = embedder_->dim();
  std::vector<std::vector<int32_t>> sequences;
  for (const Slice& s : batch) {
    const auto& all = s.request->framed.sequences;
    sequences.insert(sequences.end(), all.begin() + s.begin, all.begin() + s.end);
  }
  const encoder::Pooling pooling = batch.front().request->options.pooling;
  const EmbedLane lane = batch.front().request->lane;
  const size_t pass_tokens = std::accumulate(
      sequences.begin(), sequences.end(), size_t{0},
      [](size_t n, const std::vector<int32_t>& s) { return n + s.size(); });

  lock.unlock();
  const absl::Time start = Now();
  absl::StatusOr<std::vector<float>> pooled = embedder_->Pool(sequences, pooling);
  // One bad sequence must not fail the other requests of the pass: rerun
  // each work item alone so each gets its own answer.
  std::vector<absl::StatusOr<std::vector<float>>> per_slice;
  if (!pooled.ok() && batch.size() > 1) {
    size_t off = 0;
    for (const Slice& s : batch) {
      const size_t n = static_cast<size_t>(s.end - s.begin);
      std::vector<std::vector<int32_t>> mine(sequences.begin() + off, sequences.begin() + off + n);
      off += n;
      per_slice.push_back(embedder_->Pool(mine, pooling));
    }
  }
  const double secs = absl::ToDoubleSeconds(Now() - start);
  lock.lock();

  stats_.encoder_seconds += secs;
  ++stats_.batches;
  if (lane == EmbedLane::kQuery) {
    ++stats_.query_batches;
  } else if (pooled.ok() && secs > 0) {
    // Recent passes weigh most: the rate follows load on the host.
    const double rate = static_cast<double>(pass_tokens) / secs;
    bulk_tokens_per_second_ =
        bulk_tokens_per_second_ > 0 ? 0.7 * bulk_tokens_per_second_ + 0.3 * rate : rate;
  }
  size_t row = 0;
  for (size_t i = 0; i < batch.size(); ++i) {
    Request& r = *batch[i].request;
    const int64_t n = batch[i].end - batch[i].begin;
    const size_t first_row = per_slice.empty() ? row : 0;
    row += static_cast<size_t>(n);
    if (r.done) continue;  // dropped meanwhile (cancelled, expired, shutdown)
    const absl::StatusOr<std::vector<float>>& got = per_slice.empty() ? pooled : per_slice[i];
    absl::Status error;
    if (stop_) {
      error = absl::UnavailableError("server is shutting down");
    } else if (!got.ok()) {
      error = got.status();
    } else if (got->size() < (first_row + n) * dim) {
      error = absl::InternalError("the embedder returned fewer vectors than sequences");
    }
    if (!error.ok()) {
      if (r.in_ring) {
        r.in_ring = false;
        queued_texts_ -= r.texts;
        Ring& ring = this->ring(r.lane);
        ring.erase(std::find(ring.begin(), ring.end(), batch[i].request));
        stats_.queued_texts = queued_texts_;
      }
      Finish(r, error);
      continue;
    }
    std::copy(got->begin() + first_row * dim, got->begin() + (first_row + n) * dim,
              r.vectors.begin() + batch[i].begin * dim);
    r.pooled += n;
    if (r.pooled == r.sequences()) {
      Finish(r, encoder::CombineChunks(r.framed, r.vectors.data(), dim, r.options.normalize));
    }
  }
  done_cv_.notify_all();
}

void EmbedBatcher::WorkerLoop() {
  std::unique_lock<std::mutex> lock(mu_);
  while (true) {
    work_cv_.wait(lock, [&] { return stop_ || !rings_empty(); });
    if (stop_) return;
    std::vector<Slice> batch = TakeBatch(lock);
    if (stop_) {
      for (auto& s : batch) {
        if (!s.request->done) Finish(*s.request, absl::UnavailableError("server is shutting down"));
      }
      done_cv_.notify_all();
      return;
    }
    if (batch.empty()) {
      done_cv_.notify_all();  // DropDead may have finished some
      continue;
    }
    RunBatch(std::move(batch), lock);
  }
}

EmbedBatcherStats EmbedBatcher::stats() const {
  std::lock_guard<std::mutex> lock(mu_);
  return stats_;
}

}  // namespace neodb::engine
