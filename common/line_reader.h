#pragma once
// LineReader: a file read through an Env a line, or a run of bytes, at a
// time, through a 64 KiB buffer. For inputs read as a stream (a training
// corpus, a vector file's header and then its payload) where a whole-file
// ReadFileToString would hold the file twice or read what is not needed.
//
// Not thread-safe: one reader per thread.

#include <cstddef>
#include <limits>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "common/env.h"

namespace neodb {

class LineReader {
 public:
  // Opens `path` through env (NewSequentialFile's errors).
  static absl::StatusOr<LineReader> Open(Env* env, const std::string& path);

  // The next line into *line, without its '\n'; false at the end of the file
  // (a last line without a '\n' still counts). A line longer than
  // `max_bytes` is OUT_OF_RANGE "<path>: a line is longer than N bytes",
  // found without reading more of it than that, and the reader is then
  // past an unknown part of it.
  absl::StatusOr<bool> ReadLine(std::string* line,
                                size_t max_bytes = std::numeric_limits<size_t>::max());
  // Up to `n` bytes into `dst`, fewer only at the end of the file.
  absl::StatusOr<size_t> Read(size_t n, char* dst);

  const std::string& path() const { return path_; }

 private:
  LineReader(std::string path, std::unique_ptr<SequentialFile> file)
      : path_(std::move(path)), file_(std::move(file)) {}
  // Refills an empty buffer; false at the end of the file.
  absl::StatusOr<bool> Fill();

  std::string path_;
  std::unique_ptr<SequentialFile> file_;
  std::string buffer_;
  size_t pos_ = 0;  // buffer_[pos_, size) not yet handed out
};

}  // namespace neodb
