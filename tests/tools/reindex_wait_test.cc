// tools/neodb/reindex_wait.h: how the wait for a reindex ends on each answer
// the server can give, and what the progress line shows on the way.
#include "tools/neodb/reindex_wait.h"

#include <cstdio>
#include <cstdlib>
#include <deque>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace neodb::cli {
namespace {

using ::testing::HasSubstr;
using Response = v1::ReindexStatusResponse;

Response State(Response::State state, uint64_t done, uint64_t total, bool committed = false) {
  Response r;
  r.set_state(state);
  r.set_done(done);
  r.set_total(total);
  r.set_committed(committed);
  return r;
}

// The server's answers in order; a poll past the end is a test failure.
class Script {
 public:
  explicit Script(std::deque<absl::StatusOr<Response>> answers) : answers_(std::move(answers)) {}
  ReindexStatusPoll Poll() {
    return [this]() -> absl::StatusOr<Response> {
      ++polls_;
      if (answers_.empty()) {
        ADD_FAILURE() << "polled after the last answer";
        return absl::InternalError("no more answers");
      }
      auto next = std::move(answers_.front());
      answers_.pop_front();
      return next;
    };
  }
  int polls() const { return polls_; }

 private:
  std::deque<absl::StatusOr<Response>> answers_;
  int polls_ = 0;
};

// Waits with a log-style progress line (every state shown: interval 0)
// into memory; returns the result and what the line wrote.
struct Waited {
  absl::StatusOr<Response> result;
  std::string shown;
};
Waited Wait(Script& script) {
  char* buffer = nullptr;
  size_t size = 0;
  std::FILE* out = open_memstream(&buffer, &size);
  Waited w;
  {
    ProgressLine::Options options;  // a log, not a terminal: every state shown
    options.log_interval = std::chrono::seconds(0);
    ProgressLine progress(out, options);
    w.result = WaitForReindex(script.Poll(), "docs", "reindex docs", progress,
                              std::chrono::milliseconds(0));
  }
  std::fclose(out);
  w.shown.assign(buffer, size);
  std::free(buffer);
  return w;
}

TEST(WaitForReindex, PollsWhileRunningAndReturnsTheDoneAnswer) {
  Response done = State(Response::DONE, 3, 3, /*committed=*/true);
  done.set_model_id("m2");
  Script script({State(Response::RUNNING, 0, 3), State(Response::RUNNING, 2, 3),
                 State(Response::RUNNING, 3, 3, /*committed=*/true), done});
  const Waited w = Wait(script);
  ASSERT_TRUE(w.result.ok()) << w.result.status();
  EXPECT_EQ(w.result->model_id(), "m2");
  EXPECT_EQ(script.polls(), 4);
  EXPECT_EQ(w.shown, "reindex docs: 0 / 3\nreindex docs: 2 / 3\nreindex docs: 3 / 3 (committed)\n");
}

TEST(WaitForReindex, AFailedJobIsAnErrorWithTheServersReason) {
  Response failed = State(Response::FAILED, 1, 3);
  failed.set_error("model dir vanished");
  Script script({State(Response::RUNNING, 1, 3), failed});
  const Waited w = Wait(script);
  EXPECT_EQ(w.result.status().code(), absl::StatusCode::kInternal);
  EXPECT_THAT(w.result.status().message(), HasSubstr("reindex of docs failed: model dir vanished"));
  EXPECT_EQ(w.shown, "reindex docs: 1 / 3\n");
}

// Before this loop was shared, `neodb reindex` polled an idle job forever:
// after a server restart it never returned.
TEST(WaitForReindex, AJobTheServerNoLongerReportsEndsTheWait) {
  Script script({State(Response::RUNNING, 1, 3), State(Response::IDLE, 0, 0)});
  const Waited w = Wait(script);
  EXPECT_EQ(w.result.status().code(), absl::StatusCode::kAborted);
  EXPECT_THAT(w.result.status().message(), HasSubstr("no longer reports a reindex of docs"));
  EXPECT_EQ(script.polls(), 2);
}

TEST(WaitForReindex, AFailedPollIsReturnedUnchanged) {
  Script script({State(Response::RUNNING, 1, 3), absl::UnavailableError("no neodb server")});
  const Waited w = Wait(script);
  EXPECT_EQ(w.result.status(), absl::UnavailableError("no neodb server"));
}

}  // namespace
}  // namespace neodb::cli
