#include "common/atomic_file.h"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <filesystem>
#include <memory>

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"

namespace neodb {
namespace {

constexpr size_t kBufferBytes = 1 << 20;

std::string DirOf(const std::string& path) {
  const std::string dir = std::filesystem::path(path).parent_path().string();
  return dir.empty() ? "." : dir;
}

absl::Status WriteAndSync(Env* env, const std::string& path,
                          std::initializer_list<std::string_view> parts) {
  ASSIGN_OR_RETURN(std::unique_ptr<WritableFile> f, env->NewWritableFile(path));
  for (std::string_view part : parts) RETURN_IF_ERROR(f->Append(part));
  RETURN_IF_ERROR(f->Sync());
  return f->Close();
}

}  // namespace

absl::StatusOr<AtomicFileWriter> AtomicFileWriter::Create(Env* env, const std::string& path,
                                                          std::string temp) {
  static std::atomic<uint64_t> counter{0};
  AtomicFileWriter w;
  w.env_ = env;
  w.path_ = path;
  w.temp_ = temp.empty() ? absl::StrCat(path, ".tmp.", getpid(), ".", counter.fetch_add(1))
                         : std::move(temp);
  ASSIGN_OR_RETURN(w.file_, env->NewWritableFile(w.temp_));
  w.buffer_.reserve(kBufferBytes);
  return w;
}

AtomicFileWriter::AtomicFileWriter(AtomicFileWriter&& other) noexcept
    : env_(other.env_),
      path_(std::move(other.path_)),
      temp_(std::move(other.temp_)),
      file_(std::move(other.file_)),
      done_(other.done_),
      buffer_(std::move(other.buffer_)) {
  other.done_ = true;  // the moved-from writer owns nothing
}

AtomicFileWriter::~AtomicFileWriter() {
  if (done_) return;
  file_.reset();  // closes, ignoring errors
  env_->DeleteFile(temp_).IgnoreError();
}

absl::Status AtomicFileWriter::Flush() {
  if (buffer_.empty()) return absl::OkStatus();
  absl::Status s = file_->Append(buffer_);
  buffer_.clear();
  return s;
}

absl::Status AtomicFileWriter::Append(std::string_view data) {
  if (done_ || !file_) return absl::FailedPreconditionError("the writer is closed");
  while (!data.empty()) {
    const size_t take = std::min(data.size(), kBufferBytes - buffer_.size());
    buffer_.append(data.data(), take);
    data.remove_prefix(take);
    if (buffer_.size() == kBufferBytes) RETURN_IF_ERROR(Flush());
  }
  return absl::OkStatus();
}

absl::Status AtomicFileWriter::Commit() {
  if (done_ || !file_) return absl::FailedPreconditionError("the writer is closed");
  absl::Status s = Flush();
  if (s.ok()) s = file_->Sync();
  if (s.ok()) s = file_->Close();
  file_.reset();
  if (s.ok()) s = env_->RenameFile(temp_, path_);
  if (!s.ok()) return s;  // the destructor removes the temporary file
  done_ = true;
  return env_->SyncDir(DirOf(path_));
}

absl::Status WriteFileAtomically(Env* env, const std::string& path,
                                 std::initializer_list<std::string_view> parts) {
  return WriteFileAtomically(env, path, path + ".tmp", parts);
}

absl::Status WriteFileAtomically(Env* env, const std::string& path, const std::string& temp,
                                 std::initializer_list<std::string_view> parts) {
  absl::Status s = WriteAndSync(env, temp, parts);
  if (s.ok()) s = env->RenameFile(temp, path);
  if (!s.ok()) {
    env->DeleteFile(temp).IgnoreError();  // may not exist; the error that matters is s
    return s;
  }
  return env->SyncDir(DirOf(path));
}

}  // namespace neodb
