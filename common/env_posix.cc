// Env::Default(): POSIX files.
#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <vector>

#include "absl/strings/str_cat.h"
#include "common/env.h"

namespace neodb {
namespace {

class PosixWritableFile : public WritableFile {
 public:
  PosixWritableFile(std::string path, int fd) : path_(std::move(path)), fd_(fd) {}
  ~PosixWritableFile() override {
    if (fd_ >= 0) ::close(fd_);
  }
  absl::Status Append(std::string_view data) override {
    while (!data.empty()) {
      ssize_t n = ::write(fd_, data.data(), data.size());
      if (n < 0) {
        if (errno == EINTR) continue;
        return ErrnoStatus(errno, "cannot write", path_);
      }
      data.remove_prefix(static_cast<size_t>(n));
    }
    return absl::OkStatus();
  }
  absl::Status Sync() override {
    if (::fsync(fd_) != 0) return ErrnoStatus(errno, "cannot fsync", path_);
    return absl::OkStatus();
  }
  absl::Status Close() override {
    const int fd = fd_;
    fd_ = -1;
    if (::close(fd) != 0) return ErrnoStatus(errno, "cannot close", path_);
    return absl::OkStatus();
  }

 private:
  std::string path_;
  int fd_;
};

class PosixEnv : public Env {
 public:
  absl::StatusOr<std::unique_ptr<WritableFile>> NewWritableFile(const std::string& path) override {
    int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0) return ErrnoStatus(errno, "cannot create", path);
    return std::unique_ptr<WritableFile>(new PosixWritableFile(path, fd));
  }
  absl::Status RenameFile(const std::string& from, const std::string& to) override {
    if (::rename(from.c_str(), to.c_str()) != 0)
      return ErrnoStatus(errno, "cannot rename into", to);
    return absl::OkStatus();
  }
  absl::Status DeleteFile(const std::string& path) override {
    if (::unlink(path.c_str()) != 0) return ErrnoStatus(errno, "cannot delete", path);
    return absl::OkStatus();
  }
  absl::Status DeleteDir(const std::string& path) override {
    if (::rmdir(path.c_str()) != 0) return ErrnoStatus(errno, "cannot delete directory", path);
    return absl::OkStatus();
  }
  absl::Status CreateDir(const std::string& path) override {
    std::error_code ec;
    std::filesystem::create_directories(path, ec);
    if (ec) return ErrnoStatus(ec.value(), "cannot create directory", path);
    return absl::OkStatus();
  }
  absl::Status SyncDir(const std::string& path) override {
    int fd = ::open(path.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0) return ErrnoStatus(errno, "cannot open directory", path);
    int rc = ::fsync(fd);
    int err = errno;
    ::close(fd);
    if (rc != 0) return ErrnoStatus(err, "cannot fsync directory", path);
    return absl::OkStatus();
  }
};

}  // namespace

absl::Status ErrnoStatus(int err, std::string_view what, const std::string& path) {
  std::string message = absl::StrCat(std::string(what), " ", path, ": ", std::strerror(err));
  if (err == ENOSPC || err == EDQUOT) {
    return absl::ResourceExhaustedError(absl::StrCat(message, " (the disk is full)"));
  }
  if (err == ENOENT) return absl::NotFoundError(message);
  return absl::UnavailableError(message);
}

Env* Env::Default() {
  static Env* env = new PosixEnv();
  return env;
}

absl::Status Env::CopyFile(const std::string& from, const std::string& to) {
  std::ifstream in(from, std::ios::binary);
  if (!in) return ErrnoStatus(errno == 0 ? ENOENT : errno, "cannot open", from);
  absl::StatusOr<std::unique_ptr<WritableFile>> out = NewWritableFile(to);
  if (!out.ok()) return out.status();
  char buf[1 << 16];
  while (in) {
    in.read(buf, sizeof buf);
    if (in.gcount() > 0) {
      absl::Status s = (*out)->Append(std::string_view(buf, static_cast<size_t>(in.gcount())));
      if (!s.ok()) return s;
    }
  }
  if (in.bad()) return ErrnoStatus(EIO, "cannot read", from);
  absl::Status s = (*out)->Sync();
  if (!s.ok()) return s;
  return (*out)->Close();
}

absl::Status Env::CopyTree(const std::string& from, const std::string& to) {
  namespace fs = std::filesystem;
  absl::Status s = CreateDir(to);
  if (!s.ok()) return s;
  std::vector<std::string> dirs = {to};
  std::error_code ec;
  // Symlinks are followed (a model cache may link its files): the copy
  // holds what they point at.
  for (fs::recursive_directory_iterator
           it(from, fs::directory_options::follow_directory_symlink, ec),
       end;
       !ec && it != end; it.increment(ec)) {
    const fs::file_status st = it->status();
    const std::string dst = (fs::path(to) / fs::relative(it->path(), from)).string();
    if (fs::is_directory(st)) {
      s = CreateDir(dst);
      dirs.push_back(dst);
    } else if (fs::is_regular_file(st)) {
      s = CopyFile(it->path().string(), dst);
    } else {
      s = absl::FailedPreconditionError(
          absl::StrCat(it->path().string(), " is not a regular file or directory"));
    }
    if (!s.ok()) return s;
  }
  if (ec) return ErrnoStatus(ec.value(), "cannot list", from);
  // The entries (files, subdirectories) durable in their directories.
  for (const std::string& d : dirs) {
    s = SyncDir(d);
    if (!s.ok()) return s;
  }
  return absl::OkStatus();
}

absl::Status Env::DeleteTree(const std::string& path) {
  namespace fs = std::filesystem;
  std::error_code ec;
  const fs::file_status top = fs::symlink_status(path, ec);
  if (ec || !fs::exists(top)) return absl::OkStatus();
  if (!fs::is_directory(top)) return DeleteFile(path);
  std::vector<fs::path> entries;
  for (fs::recursive_directory_iterator it(path, ec), end; !ec && it != end; it.increment(ec)) {
    entries.push_back(it->path());
  }
  if (ec) return ErrnoStatus(ec.value(), "cannot list", path);
  // Children before their parents: the iteration lists parents first.
  for (auto it = entries.rbegin(); it != entries.rend(); ++it) {
    const bool dir = fs::is_directory(fs::symlink_status(*it, ec));
    absl::Status s = dir ? DeleteDir(it->string()) : DeleteFile(it->string());
    if (!s.ok() && !absl::IsNotFound(s)) return s;
  }
  return DeleteDir(path);
}

}  // namespace neodb
