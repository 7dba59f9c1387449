#include "index/keyword/file_io.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"

namespace neodb::keyword {
namespace {

absl::Status ErrnoStatus(std::string_view what, const std::string& path, int err) {
  std::string message = absl::StrCat(std::string(what), " ", path, ": ", std::strerror(err));
  return err == ENOENT ? absl::NotFoundError(message) : absl::UnavailableError(message);
}

}  // namespace

absl::StatusOr<std::string> ReadWholeFile(const std::string& path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return ErrnoStatus("cannot open", path, errno);
  std::string out;
  char buf[1 << 16];
  while (true) {
    ssize_t n = ::read(fd, buf, sizeof(buf));
    if (n < 0) {
      if (errno == EINTR) continue;
      absl::Status s = ErrnoStatus("cannot read", path, errno);
      ::close(fd);
      return s;
    }
    if (n == 0) break;
    out.append(buf, static_cast<size_t>(n));
  }
  ::close(fd);
  return out;
}

}  // namespace neodb::keyword
