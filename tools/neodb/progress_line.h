#pragma once
// One line of progress for long client work (ingest, reindex, adapt's mining
// and embedding), on stderr. On a terminal the line is rewritten in place
// ("\r", padded over what was there before). Into a file or a pipe, where "\r"
// would pile every update of an hour-long run into one line of megabytes, each
// shown state is a line of its own, at most one per `log_interval`, and the
// final state always.

#include <chrono>
#include <cstdio>
#include <functional>
#include <optional>
#include <string>

namespace neodb::cli {

class ProgressLine {
 public:
  using TimePoint = std::chrono::steady_clock::time_point;
  struct Options {
    bool terminal = false;
    // Terminal: the fastest rewrite (faster only flickers).
    std::chrono::duration<double> terminal_interval = std::chrono::milliseconds(250);
    // File or pipe: the most one line per this.
    std::chrono::duration<double> log_interval = std::chrono::seconds(10);
    // The clock (tests give their own). Default: steady_clock::now.
    std::function<TimePoint()> now;
  };

  // On stderr, as a terminal when stderr is one.
  ProgressLine();
  ProgressLine(std::FILE* out, Options options);
  // Ends a terminal line still open, so that what is printed next (an error,
  // say) starts on a line of its own.
  ~ProgressLine();
  ProgressLine(const ProgressLine&) = delete;
  ProgressLine& operator=(const ProgressLine&) = delete;

  // The state now; shown unless one was shown less than an interval ago (the
  // first is always shown).
  void Update(const std::string& text);
  // The final state: always shown (once), and the line ended.
  void Finish(const std::string& text);

 private:
  void Show(const std::string& text);
  void EndTerminalLine();

  std::FILE* out_;
  Options options_;
  std::optional<TimePoint> last_shown_;  // none before the first
  std::string last_text_;                // what was last shown
  bool line_open_ = false;               // terminal: a line not yet ended
};

}  // namespace neodb::cli
