#include "common/env_pausing.h"

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"

namespace neodb {
namespace {

class PausingWritableFile : public WritableFile {
 public:
  PausingWritableFile(std::unique_ptr<WritableFile> target, std::string path, PausingEnv* env)
      : target_(std::move(target)), path_(std::move(path)), env_(env) {}
  absl::Status Append(std::string_view data) override {
    env_->Before("append", path_);
    return target_->Append(data);
  }
  absl::Status Sync() override {
    env_->Before("sync", path_);
    return target_->Sync();
  }
  absl::Status Close() override { return target_->Close(); }

 private:
  std::unique_ptr<WritableFile> target_;
  std::string path_;
  PausingEnv* env_;
};

}  // namespace

void PausingEnv::PauseAt(uint64_t n, Hook hook) {
  std::lock_guard<std::mutex> lock(mu_);
  left_ = n;
  hook_ = std::move(hook);
}

void PausingEnv::Disarm() {
  std::lock_guard<std::mutex> lock(mu_);
  left_ = 0;
  hook_ = nullptr;
}

void PausingEnv::Before(const char* op, const std::string& path) {
  Hook hook;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (left_ == 0 || --left_ > 0) return;
    hook.swap(hook_);
  }
  if (hook) hook(absl::StrCat(op, " ", path));
}

absl::StatusOr<std::unique_ptr<WritableFile>> PausingEnv::NewWritableFile(const std::string& path) {
  Before("create", path);
  ASSIGN_OR_RETURN(std::unique_ptr<WritableFile> file, target_->NewWritableFile(path));
  return std::unique_ptr<WritableFile>(new PausingWritableFile(std::move(file), path, this));
}

absl::StatusOr<std::unique_ptr<WritableFile>> PausingEnv::NewAppendableFile(
    const std::string& path) {
  Before("open-append", path);
  ASSIGN_OR_RETURN(std::unique_ptr<WritableFile> file, target_->NewAppendableFile(path));
  return std::unique_ptr<WritableFile>(new PausingWritableFile(std::move(file), path, this));
}

absl::Status PausingEnv::TruncateFile(const std::string& path, uint64_t size) {
  Before("truncate", path);
  return target_->TruncateFile(path, size);
}

absl::Status PausingEnv::RenameFile(const std::string& from, const std::string& to) {
  Before("rename", to);
  return target_->RenameFile(from, to);
}

absl::Status PausingEnv::DeleteFile(const std::string& path) {
  Before("delete", path);
  return target_->DeleteFile(path);
}

absl::Status PausingEnv::DeleteDir(const std::string& path) {
  Before("rmdir", path);
  return target_->DeleteDir(path);
}

absl::Status PausingEnv::CreateDir(const std::string& path) {
  Before("mkdir", path);
  return target_->CreateDir(path);
}

absl::Status PausingEnv::SyncDir(const std::string& path) {
  Before("syncdir", path);
  return target_->SyncDir(path);
}

}  // namespace neodb
