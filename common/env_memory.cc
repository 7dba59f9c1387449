#include "common/env_memory.h"

#include <algorithm>
#include <cerrno>
#include <filesystem>
#include <map>
#include <mutex>
#include <set>

#include "absl/strings/match.h"

namespace neodb {
namespace {

using Contents = std::shared_ptr<std::string>;  // a file's bytes: its inode

// "a//b/./c/" -> "a/b/c"; "" -> ".".
std::string Normal(const std::string& path) {
  std::string n = std::filesystem::path(path).lexically_normal().string();
  while (n.size() > 1 && n.back() == '/') n.pop_back();
  return n.empty() ? "." : n;
}

std::string Parent(const std::string& normal) {
  if (normal == "/" || normal == ".") return normal;
  const std::string p = std::filesystem::path(normal).parent_path().string();
  return p.empty() ? "." : p;
}

bool Under(const std::string& path, const std::string& dir) {
  return dir == "/" ? path != "/" && absl::StartsWith(path, "/")
                    : absl::StartsWith(path, dir + "/");
}

class MemWritableFile : public WritableFile {
 public:
  MemWritableFile(std::mutex* mu, Contents contents) : mu_(mu), contents_(std::move(contents)) {}
  absl::Status Append(std::string_view data) override {
    if (closed_) return absl::FailedPreconditionError("append to a closed file");
    std::lock_guard<std::mutex> lock(*mu_);
    contents_->append(data);
    return absl::OkStatus();
  }
  absl::Status Sync() override {
    if (closed_) return absl::FailedPreconditionError("sync of a closed file");
    return absl::OkStatus();
  }
  absl::Status Close() override {
    closed_ = true;
    return absl::OkStatus();
  }

 private:
  std::mutex* mu_;
  Contents contents_;
  bool closed_ = false;
};

class MemSequentialFile : public SequentialFile {
 public:
  MemSequentialFile(std::mutex* mu, Contents contents) : mu_(mu), contents_(std::move(contents)) {}
  absl::StatusOr<size_t> Read(size_t n, char* scratch) override {
    std::lock_guard<std::mutex> lock(*mu_);
    const size_t take = offset_ >= contents_->size() ? 0 : std::min(n, contents_->size() - offset_);
    std::copy_n(contents_->data() + offset_, take, scratch);
    offset_ += take;
    return take;
  }

 private:
  std::mutex* mu_;
  Contents contents_;
  size_t offset_ = 0;
};

class MemEnv : public Env {
 public:
  MemEnv() : dirs_{".", "/"} {}

  absl::StatusOr<std::unique_ptr<WritableFile>> NewWritableFile(const std::string& path) override {
    return Open(path, /*truncate=*/true);
  }
  absl::StatusOr<std::unique_ptr<WritableFile>> NewAppendableFile(
      const std::string& path) override {
    return Open(path, /*truncate=*/false);
  }

  absl::Status TruncateFile(const std::string& path, uint64_t size) override {
    std::lock_guard<std::mutex> lock(mu_);
    absl::StatusOr<Contents> c = FileLocked(Normal(path), "cannot truncate", path);
    if (!c.ok()) return c.status();
    (*c)->resize(size, '\0');
    return absl::OkStatus();
  }

  absl::StatusOr<std::unique_ptr<SequentialFile>> NewSequentialFile(
      const std::string& path) override {
    std::lock_guard<std::mutex> lock(mu_);
    absl::StatusOr<Contents> c = FileLocked(Normal(path), "cannot open", path);
    if (!c.ok()) return c.status();
    return std::unique_ptr<SequentialFile>(new MemSequentialFile(&mu_, *c));
  }

  absl::StatusOr<std::vector<std::string>> GetChildren(const std::string& dir) override {
    std::lock_guard<std::mutex> lock(mu_);
    const std::string d = Normal(dir);
    if (files_.count(d)) return ErrnoStatus(ENOTDIR, "cannot list", dir);
    if (!dirs_.count(d)) return ErrnoStatus(ENOENT, "cannot list", dir);
    std::vector<std::string> names;
    auto add = [&](const std::string& p) {
      if (p != d && Parent(p) == d) names.push_back(std::filesystem::path(p).filename().string());
    };
    for (const auto& [p, c] : files_) add(p);
    for (const std::string& p : dirs_) add(p);
    std::sort(names.begin(), names.end());
    return names;
  }

  absl::StatusOr<FileKind> GetFileKind(const std::string& path, bool) override {
    std::lock_guard<std::mutex> lock(mu_);
    const std::string n = Normal(path);
    if (files_.count(n)) return FileKind::kFile;
    if (dirs_.count(n)) return FileKind::kDirectory;
    return ErrnoStatus(ENOENT, "cannot stat", path);
  }

  absl::StatusOr<uint64_t> GetFileSize(const std::string& path) override {
    std::lock_guard<std::mutex> lock(mu_);
    const std::string n = Normal(path);
    if (dirs_.count(n)) return uint64_t{0};
    absl::StatusOr<Contents> c = FileLocked(n, "cannot stat", path);
    if (!c.ok()) return c.status();
    return static_cast<uint64_t>((*c)->size());
  }

  absl::Status RenameFile(const std::string& from, const std::string& to) override {
    std::lock_guard<std::mutex> lock(mu_);
    const std::string f = Normal(from), t = Normal(to);
    if (!files_.count(f) && !dirs_.count(f)) return ErrnoStatus(ENOENT, "cannot rename into", to);
    if (absl::Status s = ParentIsDirLocked(t, "cannot rename into", to); !s.ok()) return s;
    if (f == t) return absl::OkStatus();
    if (auto it = files_.find(f); it != files_.end()) {
      if (dirs_.count(t)) return ErrnoStatus(EISDIR, "cannot rename into", to);
      Contents c = it->second;
      files_.erase(it);
      files_[t] = std::move(c);
      return absl::OkStatus();
    }
    // A directory: onto an absent or empty directory, not into itself.
    if (files_.count(t)) return ErrnoStatus(ENOTDIR, "cannot rename into", to);
    if (Under(t, f)) return ErrnoStatus(EINVAL, "cannot rename into", to);
    if (dirs_.count(t) && !EmptyLocked(t)) return ErrnoStatus(ENOTEMPTY, "cannot rename into", to);
    auto moved = [&](const std::string& p) { return t + p.substr(f.size()); };
    std::map<std::string, Contents> files;
    for (auto& [p, c] : files_) files[Under(p, f) ? moved(p) : p] = std::move(c);
    std::set<std::string> dirs;
    for (const std::string& p : dirs_) dirs.insert(p == f || Under(p, f) ? moved(p) : p);
    files_.swap(files);
    dirs_.swap(dirs);
    return absl::OkStatus();
  }

  absl::Status DeleteFile(const std::string& path) override {
    std::lock_guard<std::mutex> lock(mu_);
    const std::string n = Normal(path);
    if (dirs_.count(n)) return ErrnoStatus(EISDIR, "cannot delete", path);
    if (files_.erase(n) == 0) return ErrnoStatus(ENOENT, "cannot delete", path);
    return absl::OkStatus();
  }

  absl::Status DeleteDir(const std::string& path) override {
    std::lock_guard<std::mutex> lock(mu_);
    const std::string n = Normal(path);
    if (files_.count(n)) return ErrnoStatus(ENOTDIR, "cannot delete directory", path);
    if (!dirs_.count(n)) return ErrnoStatus(ENOENT, "cannot delete directory", path);
    if (n == "." || n == "/") return ErrnoStatus(EBUSY, "cannot delete directory", path);
    if (!EmptyLocked(n)) return ErrnoStatus(ENOTEMPTY, "cannot delete directory", path);
    dirs_.erase(n);
    return absl::OkStatus();
  }

  absl::Status CreateDir(const std::string& path) override {
    std::lock_guard<std::mutex> lock(mu_);
    const std::string n = Normal(path);
    std::vector<std::string> missing;
    for (std::string p = n; !dirs_.count(p); p = Parent(p)) {
      if (files_.count(p)) {
        return ErrnoStatus(p == n ? EEXIST : ENOTDIR, "cannot create directory", path);
      }
      missing.push_back(p);
      if (Parent(p) == p) break;
    }
    dirs_.insert(missing.begin(), missing.end());
    return absl::OkStatus();
  }

  absl::Status SyncDir(const std::string& path) override {
    std::lock_guard<std::mutex> lock(mu_);
    const std::string n = Normal(path);
    if (files_.count(n)) return ErrnoStatus(ENOTDIR, "cannot open directory", path);
    if (!dirs_.count(n)) return ErrnoStatus(ENOENT, "cannot open directory", path);
    return absl::OkStatus();
  }

 private:
  absl::StatusOr<std::unique_ptr<WritableFile>> Open(const std::string& path, bool truncate) {
    std::lock_guard<std::mutex> lock(mu_);
    const std::string n = Normal(path);
    if (dirs_.count(n)) return ErrnoStatus(EISDIR, "cannot create", path);
    if (absl::Status s = ParentIsDirLocked(n, "cannot create", path); !s.ok()) return s;
    Contents& c = files_[n];
    if (!c) c = std::make_shared<std::string>();
    if (truncate) c->clear();  // in place: an open handle sees it, as with O_TRUNC
    return std::unique_ptr<WritableFile>(new MemWritableFile(&mu_, c));
  }

  // REQUIRES: mu_ held.
  absl::Status ParentIsDirLocked(const std::string& n, std::string_view what,
                                 const std::string& path) const {
    const std::string parent = Parent(n);
    if (dirs_.count(parent)) return absl::OkStatus();
    return ErrnoStatus(files_.count(parent) ? ENOTDIR : ENOENT, what, path);
  }

  absl::StatusOr<Contents> FileLocked(const std::string& n, std::string_view what,
                                      const std::string& path) const {
    if (auto it = files_.find(n); it != files_.end()) return it->second;
    return ErrnoStatus(dirs_.count(n) ? EISDIR : ENOENT, what, path);
  }

  bool EmptyLocked(const std::string& dir) const {
    auto inside = [&](const std::string& p) { return Under(p, dir); };
    return std::none_of(files_.begin(), files_.end(),
                        [&](const auto& e) { return inside(e.first); }) &&
           std::none_of(dirs_.begin(), dirs_.end(), inside);
  }

  std::mutex mu_;
  std::map<std::string, Contents> files_;  // normalised path -> bytes
  std::set<std::string> dirs_;             // normalised paths
};

}  // namespace

std::unique_ptr<Env> NewMemEnv() { return std::make_unique<MemEnv>(); }

}  // namespace neodb
