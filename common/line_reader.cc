#include "common/line_reader.h"

#include <algorithm>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"

namespace neodb {

namespace {
constexpr size_t kBufferBytes = 1 << 16;
}  // namespace

absl::StatusOr<LineReader> LineReader::Open(Env* env, const std::string& path) {
  ASSIGN_OR_RETURN(std::unique_ptr<SequentialFile> file, env->NewSequentialFile(path));
  return LineReader(path, std::move(file));
}

absl::StatusOr<bool> LineReader::Fill() {
  buffer_.resize(kBufferBytes);
  pos_ = 0;
  ASSIGN_OR_RETURN(const size_t n, file_->Read(buffer_.size(), buffer_.data()));
  buffer_.resize(n);
  return n > 0;
}

absl::StatusOr<bool> LineReader::ReadLine(std::string* line, size_t max_bytes) {
  line->clear();
  bool any = false;  // a byte of this line (or its '\n') was seen
  for (;;) {
    if (pos_ == buffer_.size()) {
      ASSIGN_OR_RETURN(const bool more, Fill());
      if (!more) return any;
    }
    any = true;
    const char* begin = buffer_.data() + pos_;
    const size_t avail = buffer_.size() - pos_;
    const void* nl = std::memchr(begin, '\n', avail);
    const size_t take = nl != nullptr ? static_cast<const char*>(nl) - begin : avail;
    if (take > max_bytes - line->size()) {
      return absl::OutOfRangeError(
          absl::StrCat(path_, ": a line is longer than ", max_bytes, " bytes"));
    }
    line->append(begin, take);
    pos_ += take;
    if (nl != nullptr) {
      ++pos_;  // the '\n'
      return true;
    }
  }
}

absl::StatusOr<size_t> LineReader::Read(size_t n, char* dst) {
  size_t done = 0;
  // What the buffer holds first, then straight from the file.
  const size_t from_buffer = std::min(n, buffer_.size() - pos_);
  std::memcpy(dst, buffer_.data() + pos_, from_buffer);
  pos_ += from_buffer;
  done += from_buffer;
  while (done < n) {
    ASSIGN_OR_RETURN(const size_t got, file_->Read(n - done, dst + done));
    if (got == 0) break;
    done += got;
  }
  return done;
}

}  // namespace neodb
