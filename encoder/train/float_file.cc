#include "encoder/train/float_file.h"

#include <cstring>
#include <memory>
#include <string_view>

#include "absl/strings/str_cat.h"
#include "common/atomic_file.h"

namespace neodb::encoder::train {
namespace {

constexpr char kMagic[8] = {'N', 'E', 'O', 'D', 'B', 'F', '3', '2'};

uint64_t Fnv1a(const void* data, size_t n) {
  const unsigned char* p = static_cast<const unsigned char*>(data);
  uint64_t h = 0xcbf29ce484222325ULL;
  for (size_t i = 0; i < n; ++i) {
    h ^= p[i];
    h *= 0x100000001b3ULL;
  }
  return h;
}

// Reads exactly `n` bytes (fewer only at the end of the file: DATA_LOSS).
absl::Status ReadExactly(SequentialFile& f, const std::string& path, size_t n, void* out) {
  char* p = static_cast<char*>(out);
  while (n > 0) {
    ASSIGN_OR_RETURN(size_t got, f.Read(n, p));
    if (got == 0) return absl::DataLossError(absl::StrCat(path, ": short read"));
    p += got;
    n -= got;
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status WriteFloatFile(const std::string& path, const std::vector<float>& values, Env* env) {
  const uint64_t count = values.size();
  const uint64_t sum = Fnv1a(values.data(), values.size() * sizeof(float));
  return WriteFileAtomically(
      env, path,
      {std::string_view(kMagic, 8), std::string_view(reinterpret_cast<const char*>(&count), 8),
       std::string_view(reinterpret_cast<const char*>(values.data()), count * sizeof(float)),
       std::string_view(reinterpret_cast<const char*>(&sum), 8)});
}

absl::StatusOr<std::vector<float>> ReadFloatFile(const std::string& path, int64_t expected_count,
                                                 Env* env) {
  absl::StatusOr<std::unique_ptr<SequentialFile>> f = env->NewSequentialFile(path);
  if (absl::IsNotFound(f.status())) {
    return absl::NotFoundError(absl::StrCat("cannot open ", path));
  }
  RETURN_IF_ERROR(f.status());
  char magic[8];
  uint64_t count = 0;
  if (!ReadExactly(**f, path, 8, magic).ok() || std::memcmp(magic, kMagic, 8) != 0 ||
      !ReadExactly(**f, path, 8, &count).ok()) {
    return absl::DataLossError(absl::StrCat(path, ": not a neodb float file"));
  }
  if (expected_count >= 0 && count != static_cast<uint64_t>(expected_count)) {
    return absl::DataLossError(
        absl::StrCat(path, ": holds ", count, " values, expected ", expected_count));
  }
  ASSIGN_OR_RETURN(const uint64_t size, env->GetFileSize(path));
  if (count > (size_t{1} << 40) || size != 24 + count * sizeof(float)) {
    return absl::DataLossError(absl::StrCat(path, ": size ", size, " does not match ", count,
                                            " values (truncated or padded)"));
  }
  std::vector<float> values(count);
  uint64_t sum = 0;
  RETURN_IF_ERROR(ReadExactly(**f, path, count * sizeof(float), values.data()));
  RETURN_IF_ERROR(ReadExactly(**f, path, 8, &sum));
  if (sum != Fnv1a(values.data(), count * sizeof(float))) {
    return absl::DataLossError(absl::StrCat(path, ": checksum mismatch"));
  }
  return values;
}

}  // namespace neodb::encoder::train
