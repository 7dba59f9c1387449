#include "engine/data_dir_lock.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"

namespace neodb::engine {

absl::StatusOr<std::unique_ptr<DataDirLock>> DataDirLock::Acquire(const std::string& data_dir) {
  const std::string path = (std::filesystem::path(data_dir) / "neodb.pid").string();
  int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0) {
    return absl::FailedPreconditionError(
        absl::StrCat("cannot open ", path, ": ", std::strerror(errno)));
  }
  if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
    const int err = errno;
    char buf[32] = {};
    ssize_t n = ::pread(fd, buf, sizeof buf - 1, 0);
    ::close(fd);
    if (err != EWOULDBLOCK) {
      return absl::FailedPreconditionError(
          absl::StrCat("cannot lock ", path, ": ", std::strerror(err)));
    }
    int pid = 0;
    std::string who = "another neodb process";
    if (n > 0 && absl::SimpleAtoi(absl::StripAsciiWhitespace(std::string(buf, n)), &pid)) {
      who = absl::StrCat(who, " (pid ", pid, ")");
    }
    return absl::FailedPreconditionError(
        absl::StrCat("data directory ", data_dir, " is in use by ", who));
  }
  const std::string pid = absl::StrCat(::getpid(), "\n");
  if (::ftruncate(fd, 0) != 0 || ::pwrite(fd, pid.data(), pid.size(), 0) < 0) {
    // The lock holds regardless; only the diagnostic is lost.
  }
  return std::unique_ptr<DataDirLock>(new DataDirLock(fd));
}

DataDirLock::~DataDirLock() {
  if (fd_ >= 0) ::close(fd_);  // releases the flock
}

}  // namespace neodb::engine
