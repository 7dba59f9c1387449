// tools/neodb/progress_line.h: what a terminal and what a log file receive.
#include "tools/neodb/progress_line.h"

#include <cstdio>
#include <cstdlib>
#include <optional>
#include <string>

#include "gtest/gtest.h"

namespace neodb::cli {
namespace {

using std::chrono::seconds;

// A ProgressLine writing into memory, on a clock the test moves.
class Capture {
 public:
  explicit Capture(bool terminal) {
    out_ = open_memstream(&buffer_, &size_);
    line_.emplace(out_, ProgressLine::Options{
                            .terminal = terminal,
                            .terminal_interval = seconds(1),
                            .log_interval = seconds(10),
                            .now = [this] { return ProgressLine::TimePoint{} + elapsed_; },
                        });
  }
  ~Capture() {
    line_.reset();
    std::fclose(out_);
    std::free(buffer_);
  }
  ProgressLine& line() { return *line_; }
  void Advance(seconds s) { elapsed_ += s; }
  std::string Text() {
    std::fflush(out_);
    return std::string(buffer_, size_);
  }
  void Close() { line_.reset(); }

 private:
  char* buffer_ = nullptr;
  size_t size_ = 0;
  std::FILE* out_ = nullptr;
  seconds elapsed_{100};
  std::optional<ProgressLine> line_;
};

TEST(ProgressLine, LogGetsWholeLinesAtMostOncePerInterval) {
  Capture c(/*terminal=*/false);
  c.line().Update("1/9");  // the first state is always shown
  c.Advance(seconds(3));
  c.line().Update("2/9");  // too soon
  c.Advance(seconds(7));
  c.line().Update("3/9");  // 10 s after the last line
  c.Advance(seconds(1));
  c.line().Update("4/9");
  c.line().Finish("9/9");  // always shown
  EXPECT_EQ(c.Text(), "1/9\n3/9\n9/9\n");
  c.Close();
  EXPECT_EQ(c.Text(), "1/9\n3/9\n9/9\n");  // no "\r" anywhere, nothing left to end
}

TEST(ProgressLine, LogDoesNotRepeatTheFinalStateItJustShowed) {
  Capture c(/*terminal=*/false);
  c.line().Update("5/5");
  c.line().Finish("5/5");
  EXPECT_EQ(c.Text(), "5/5\n");
}

TEST(ProgressLine, TerminalRewritesOneLineAndPadsOverALongerOne) {
  Capture c(/*terminal=*/true);
  c.line().Update("10/100 done");
  c.Advance(seconds(1));
  c.line().Update("9/9");  // shorter: spaces over "done", then back
  c.line().Update("too soon");
  c.line().Finish("100/100 done");
  EXPECT_EQ(c.Text(), "\r10/100 done\r9/9        \r9/9\r100/100 done\n");
}

TEST(ProgressLine, AnOpenTerminalLineIsEndedWhenTheProgressEnds) {
  Capture c(/*terminal=*/true);
  c.line().Update("3/7");
  c.Close();  // an error printed next starts on its own line
  EXPECT_EQ(c.Text(), "\r3/7\n");
}

}  // namespace
}  // namespace neodb::cli
