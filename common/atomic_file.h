#pragma once
// The project's one atomic writer: whole-file replacement that a crash cannot
// tear. Write a temporary file beside `path`, fsync it, rename it over `path`,
// fsync the directory; a crash leaves the old file or the new one. On any
// error the temporary file is removed (so a failed write on a full disk does
// not keep the space it took) and the error returned; `path` is then
// untouched. Everything goes through an Env, so a test's FaultInjectionEnv
// reaches every step. Two forms: WriteFileAtomically for contents in memory,
// AtomicFileWriter for files written piece by piece (checkpoints of hundreds
// of MB, tensor by tensor).

#include <cstddef>
#include <initializer_list>
#include <memory>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "common/env.h"

namespace neodb {

// Not thread-safe; one writer per file.
class AtomicFileWriter {
 public:
  // Creates the temporary file `temp`, by default "<path>.tmp.<pid>.<n>"
  // (unique, so two writers of one path never share it).
  static absl::StatusOr<AtomicFileWriter> Create(Env* env, const std::string& path,
                                                 std::string temp = "");

  AtomicFileWriter(AtomicFileWriter&& other) noexcept;
  AtomicFileWriter& operator=(AtomicFileWriter&&) = delete;
  AtomicFileWriter(const AtomicFileWriter&) = delete;
  ~AtomicFileWriter();  // removes the temporary file unless committed

  // Buffered (1 MiB): small appends cost no system call each.
  absl::Status Append(std::string_view data);
  absl::Status Append(const void* data, size_t size) {
    return Append(std::string_view(static_cast<const char*>(data), size));
  }
  // Flush, fsync, close, rename over the final path, fsync the directory.
  absl::Status Commit();

 private:
  AtomicFileWriter() = default;
  absl::Status Flush();

  Env* env_ = nullptr;
  std::string path_;
  std::string temp_;
  std::unique_ptr<WritableFile> file_;
  bool done_ = false;  // committed, or failed and cleaned up
  std::string buffer_;
};

absl::Status WriteFileAtomically(Env* env, const std::string& path,
                                 std::initializer_list<std::string_view> parts);

// As above with an explicit temp path (snapshots name theirs so that a
// crashed writer's leftovers can be recognised and pruned).
absl::Status WriteFileAtomically(Env* env, const std::string& path, const std::string& temp,
                                 std::initializer_list<std::string_view> parts);

}  // namespace neodb
