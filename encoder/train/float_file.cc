#include "encoder/train/float_file.h"

#include <cstdio>
#include <cstring>
#include <memory>

#include "absl/strings/str_cat.h"

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

struct FileCloser {
  void operator()(std::FILE* f) const { std::fclose(f); }
};

}  // namespace

absl::Status WriteFloatFile(const std::string& path, const std::vector<float>& values) {
  std::unique_ptr<std::FILE, FileCloser> f(std::fopen(path.c_str(), "wb"));
  if (!f) return absl::InternalError(absl::StrCat("cannot create ", path));
  const uint64_t count = values.size();
  const uint64_t sum = Fnv1a(values.data(), values.size() * sizeof(float));
  bool ok = std::fwrite(kMagic, 1, 8, f.get()) == 8 && std::fwrite(&count, 8, 1, f.get()) == 1 &&
            std::fwrite(values.data(), sizeof(float), values.size(), f.get()) == values.size() &&
            std::fwrite(&sum, 8, 1, f.get()) == 1;
  ok = std::fflush(f.get()) == 0 && ok;
  if (!ok) return absl::InternalError(absl::StrCat("error writing ", path));
  return absl::OkStatus();
}

absl::StatusOr<std::vector<float>> ReadFloatFile(const std::string& path, int64_t expected_count) {
  std::unique_ptr<std::FILE, FileCloser> f(std::fopen(path.c_str(), "rb"));
  if (!f) return absl::NotFoundError(absl::StrCat("cannot open ", path));
  char magic[8];
  uint64_t count = 0;
  if (std::fread(magic, 1, 8, f.get()) != 8 || std::memcmp(magic, kMagic, 8) != 0 ||
      std::fread(&count, 8, 1, f.get()) != 1) {
    return absl::DataLossError(absl::StrCat(path, ": not a neodb float file"));
  }
  if (expected_count >= 0 && count != static_cast<uint64_t>(expected_count)) {
    return absl::DataLossError(
        absl::StrCat(path, ": holds ", count, " values, expected ", expected_count));
  }
  if (std::fseek(f.get(), 0, SEEK_END) != 0) return absl::DataLossError(path);
  const long size = std::ftell(f.get());
  if (size < 0 || static_cast<uint64_t>(size) != 24 + count * sizeof(float)) {
    return absl::DataLossError(absl::StrCat(path, ": size ", size, " does not match ", count,
                                            " values (truncated or padded)"));
  }
  std::fseek(f.get(), 16, SEEK_SET);
  std::vector<float> values(count);
  uint64_t sum = 0;
  if (std::fread(values.data(), sizeof(float), count, f.get()) != count ||
      std::fread(&sum, 8, 1, f.get()) != 1) {
    return absl::DataLossError(absl::StrCat(path, ": short read"));
  }
  if (sum != Fnv1a(values.data(), count * sizeof(float))) {
    return absl::DataLossError(absl::StrCat(path, ": checksum mismatch"));
  }
  return values;
}

}  // namespace neodb::encoder::train
