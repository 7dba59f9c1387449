#include "tools/neodb/progress_line.h"

#include <unistd.h>

#include <utility>

namespace neodb::cli {

namespace {

ProgressLine::Options ForStderr() {
  ProgressLine::Options options;
  options.terminal = isatty(fileno(stderr)) == 1;
  return options;
}

}  // namespace

ProgressLine::ProgressLine() : ProgressLine(stderr, ForStderr()) {}

ProgressLine::ProgressLine(std::FILE* out, Options options)
    : out_(out), options_(std::move(options)) {
  if (!options_.now) options_.now = [] { return std::chrono::steady_clock::now(); };
}

ProgressLine::~ProgressLine() { EndTerminalLine(); }

void ProgressLine::Update(const std::string& text) {
  const auto interval = options_.terminal ? options_.terminal_interval : options_.log_interval;
  if (last_shown_.has_value() && options_.now() - *last_shown_ < interval) return;
  Show(text);
}

void ProgressLine::Finish(const std::string& text) {
  // A log that shows this state already does not need it twice.
  if (options_.terminal || !last_shown_.has_value() || text != last_text_) Show(text);
  EndTerminalLine();
}

void ProgressLine::Show(const std::string& text) {
  if (options_.terminal) {
    // Spaces over the end of a longer line before, then back to its end.
    const size_t pad = last_text_.size() > text.size() ? last_text_.size() - text.size() : 0;
    std::fprintf(out_, "\r%s%*s", text.c_str(), static_cast<int>(pad), "");
    if (pad > 0) std::fprintf(out_, "\r%s", text.c_str());
    line_open_ = true;
  } else {
    std::fprintf(out_, "%s\n", text.c_str());
  }
  std::fflush(out_);
  last_shown_ = options_.now();
  last_text_ = text;
}

void ProgressLine::EndTerminalLine() {
  if (!line_open_) return;
  std::fprintf(out_, "\n");
  std::fflush(out_);
  line_open_ = false;
  last_text_.clear();  // a new line has nothing to pad over
}

}  // namespace neodb::cli
