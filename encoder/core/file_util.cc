#include "encoder/core/file_util.h"

#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <system_error>

#include "absl/strings/str_cat.h"

namespace neodb::encoder {

namespace fs = std::filesystem;

bool IsRegularFile(const std::string& path) {
  std::error_code ec;
  return fs::is_regular_file(path, ec);
}

absl::StatusOr<std::string> ReadWholeFile(const std::string& path, size_t max_bytes) {
  std::error_code ec;
  const fs::file_status st = fs::status(path, ec);
  if (ec || !fs::exists(st)) return absl::NotFoundError(absl::StrCat(path, " does not exist"));
  if (!fs::is_regular_file(st)) {
    return absl::InvalidArgumentError(absl::StrCat(path, " is not a regular file"));
  }
  const auto size = fs::file_size(path, ec);
  if (ec) return absl::InternalError(absl::StrCat("cannot stat ", path, ": ", ec.message()));
  if (size > max_bytes) {
    return absl::InvalidArgumentError(
        absl::StrCat(path, " is ", size, " bytes, more than the limit of ", max_bytes));
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) return absl::InternalError(absl::StrCat("cannot open ", path));
  std::string data(static_cast<size_t>(size), '\0');
  in.read(data.data(), static_cast<std::streamsize>(size));
  if (in.gcount() != static_cast<std::streamsize>(size)) {
    return absl::InternalError(absl::StrCat("short read from ", path));
  }
  return data;
}

std::string ExecutableDir() {
  char exe[4096];
  const ssize_t n = ::readlink("/proc/self/exe", exe, sizeof(exe) - 1);
  if (n <= 0) return "";
  const std::string self(exe, static_cast<size_t>(n));
  const size_t slash = self.rfind('/');
  return slash == std::string::npos ? "" : self.substr(0, slash);
}

}  // namespace neodb::encoder
