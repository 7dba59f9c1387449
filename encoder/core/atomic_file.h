#pragma once
// AtomicFileWriter: writes a file under a temporary name beside its final
// path, then fsyncs, renames over the final path and fsyncs the directory, so
// a crash leaves either the old file or the complete new one, never a torn
// file. Abandoned writers remove their temporary file.
//
// Not thread-safe; one writer per file.

#include <cstddef>
#include <string>
#include <string_view>

#include "common/status_macros.h"

namespace neodb::encoder {

class AtomicFileWriter {
 public:
  // Creates "<path>.tmp.<pid>.<n>" in the directory of `path`.
  static absl::StatusOr<AtomicFileWriter> Create(const std::string& path);

  AtomicFileWriter(AtomicFileWriter&& other) noexcept;
  AtomicFileWriter& operator=(AtomicFileWriter&&) = delete;
  AtomicFileWriter(const AtomicFileWriter&) = delete;
  ~AtomicFileWriter();  // removes the temporary file unless committed

  absl::Status Append(const void* data, size_t size);
  absl::Status Append(std::string_view s) { return Append(s.data(), s.size()); }
  // fsync, close, rename to the final path, fsync the directory.
  absl::Status Commit();

 private:
  AtomicFileWriter() = default;
  absl::Status Flush();

  std::string path_;
  std::string tmp_path_;
  int fd_ = -1;
  bool committed_ = false;
  std::string buffer_;  // batches small writes
};

// Writes `contents` to `path` atomically (as above).
absl::Status WriteFileAtomically(const std::string& path, std::string_view contents);

// fsyncs a directory so that renames into it are durable.
absl::Status SyncDirectory(const std::string& dir);

}  // namespace neodb::encoder
