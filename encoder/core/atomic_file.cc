#include "encoder/core/atomic_file.h"

#include <fcntl.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>

#include "absl/strings/str_cat.h"

namespace neodb::encoder {
namespace {

constexpr size_t kBufferBytes = 1 << 20;

std::string ErrnoText() { return std::strerror(errno); }

std::string DirName(const std::string& path) {
  const size_t slash = path.rfind('/');
  if (slash == std::string::npos) return ".";
  if (slash == 0) return "/";
  return path.substr(0, slash);
}

}  // namespace

absl::Status SyncDirectory(const std::string& dir) {
  const int fd = open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return absl::InternalError(absl::StrCat("open ", dir, ": ", ErrnoText()));
  const int rc = fsync(fd);
  const std::string err = ErrnoText();
  close(fd);
  if (rc != 0) return absl::InternalError(absl::StrCat("fsync ", dir, ": ", err));
  return absl::OkStatus();
}

absl::StatusOr<AtomicFileWriter> AtomicFileWriter::Create(const std::string& path) {
  static std::atomic<uint64_t> counter{0};
  AtomicFileWriter w;
  w.path_ = path;
  w.tmp_path_ = absl::StrCat(path, ".tmp.", getpid(), ".", counter.fetch_add(1));
  w.fd_ = open(w.tmp_path_.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (w.fd_ < 0) {
    return absl::PermissionDeniedError(
        absl::StrCat("cannot create ", w.tmp_path_, ": ", ErrnoText()));
  }
  w.buffer_.reserve(kBufferBytes);
  return w;
}

AtomicFileWriter::AtomicFileWriter(AtomicFileWriter&& other) noexcept
    : path_(std::move(other.path_)),
      tmp_path_(std::move(other.tmp_path_)),
      fd_(other.fd_),
      committed_(other.committed_),
      buffer_(std::move(other.buffer_)) {
  other.fd_ = -1;
  other.committed_ = true;  // the moved-from object owns nothing
}

AtomicFileWriter::~AtomicFileWriter() {
  if (fd_ >= 0) close(fd_);
  if (!committed_ && !tmp_path_.empty()) unlink(tmp_path_.c_str());
}

absl::Status AtomicFileWriter::Flush() {
  size_t done = 0;
  while (done < buffer_.size()) {
    const ssize_t n = write(fd_, buffer_.data() + done, buffer_.size() - done);
    if (n < 0) {
      if (errno == EINTR) continue;
      return absl::ResourceExhaustedError(absl::StrCat("write ", tmp_path_, ": ", ErrnoText()));
    }
    done += static_cast<size_t>(n);
  }
  buffer_.clear();
  return absl::OkStatus();
}

absl::Status AtomicFileWriter::Append(const void* data, size_t size) {
  if (fd_ < 0 || committed_) return absl::FailedPreconditionError("writer is closed");
  const char* p = static_cast<const char*>(data);
  while (size > 0) {
    const size_t take = std::min(size, kBufferBytes - buffer_.size());
    buffer_.append(p, take);
    p += take;
    size -= take;
    if (buffer_.size() == kBufferBytes) RETURN_IF_ERROR(Flush());
  }
  return absl::OkStatus();
}

absl::Status AtomicFileWriter::Commit() {
  if (fd_ < 0 || committed_) return absl::FailedPreconditionError("writer is closed");
  RETURN_IF_ERROR(Flush());
  if (fsync(fd_) != 0) {
    return absl::InternalError(absl::StrCat("fsync ", tmp_path_, ": ", ErrnoText()));
  }
  const int rc = close(fd_);
  fd_ = -1;
  if (rc != 0) return absl::InternalError(absl::StrCat("close ", tmp_path_, ": ", ErrnoText()));
  if (rename(tmp_path_.c_str(), path_.c_str()) != 0) {
    return absl::InternalError(
        absl::StrCat("rename ", tmp_path_, " to ", path_, ": ", ErrnoText()));
  }
  committed_ = true;
  return SyncDirectory(DirName(path_));
}

absl::Status WriteFileAtomically(const std::string& path, std::string_view contents) {
  ASSIGN_OR_RETURN(AtomicFileWriter w, AtomicFileWriter::Create(path));
  RETURN_IF_ERROR(w.Append(contents));
  return w.Commit();
}

}  // namespace neodb::encoder
