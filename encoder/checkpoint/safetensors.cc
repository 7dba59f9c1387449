#include "encoder/checkpoint/safetensors.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <bit>
#include <cerrno>
#include <cstring>
#include <limits>
#include <set>

#include <zstd.h>

#include "absl/strings/str_cat.h"
#include "nlohmann/json.hpp"

namespace neodb::encoder {

static_assert(std::endian::native == std::endian::little,
              "safetensors data is little-endian; a big-endian host needs byte swapping");

namespace {

using nlohmann::json;

struct DTypeEntry {
  std::string_view name;
  StDType type;
  size_t size;
};

constexpr DTypeEntry kDTypes[] = {
    {"F32", StDType::kF32, 4},   {"F16", StDType::kF16, 2},        {"BF16", StDType::kBF16, 2},
    {"F64", StDType::kF64, 8},   {"I64", StDType::kI64, 8},        {"I32", StDType::kI32, 4},
    {"I16", StDType::kI16, 2},   {"I8", StDType::kI8, 1},          {"U64", StDType::kU64, 8},
    {"U32", StDType::kU32, 4},   {"U16", StDType::kU16, 2},        {"U8", StDType::kU8, 1},
    {"BOOL", StDType::kBool, 1}, {"F8_E4M3", StDType::kF8E4M3, 1}, {"F8_E5M2", StDType::kF8E5M2, 1},
};

std::string ErrnoText() { return std::strerror(errno); }

// The decompressed size the stream declares, summed over its frames, with the
// stable API only (ZSTD_findDecompressedSize is in zstd's experimental part):
// ZSTD_CONTENTSIZE_ERROR for bytes that are not whole zstd frames,
// ZSTD_CONTENTSIZE_UNKNOWN when a frame does not declare its size.
unsigned long long DeclaredZstdSize(const uint8_t* src, size_t size) {
  if (size == 0) return ZSTD_CONTENTSIZE_ERROR;  // no frame at all
  unsigned long long total = 0;
  while (size > 0) {
    const unsigned long long frame = ZSTD_getFrameContentSize(src, size);
    if (frame == ZSTD_CONTENTSIZE_ERROR || frame == ZSTD_CONTENTSIZE_UNKNOWN) return frame;
    const size_t used = ZSTD_findFrameCompressedSize(src, size);
    if (ZSTD_isError(used)) return ZSTD_CONTENTSIZE_ERROR;
    if (total + frame < total) return ZSTD_CONTENTSIZE_ERROR;  // overflow: not a real stream
    total += frame;
    src += used;
    size -= used;
  }
  return total;
}

// Reads a JSON integer that must be >= 0 and fit in int64.
bool ReadNonNegative(const json& v, uint64_t* out) {
  if (v.is_number_unsigned()) {
    *out = v.get<uint64_t>();
    return *out <= static_cast<uint64_t>(std::numeric_limits<int64_t>::max());
  }
  return false;  // negative integers, floats, strings, …
}

}  // namespace

struct SafetensorsFile::Mapping {
  void* addr = nullptr;
  size_t size = 0;
  ~Mapping() {
    if (addr != nullptr) munmap(addr, size);
  }
};

size_t StDTypeSize(StDType t) {
  for (const DTypeEntry& e : kDTypes) {
    if (e.type == t) return e.size;
  }
  return 0;
}

bool ParseStDType(std::string_view name, StDType* out) {
  for (const DTypeEntry& e : kDTypes) {
    if (e.name == name) {
      *out = e.type;
      return true;
    }
  }
  return false;
}

absl::StatusOr<SafetensorsFile> SafetensorsFile::Open(const std::string& path) {
  const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    if (errno == ENOENT) return absl::NotFoundError(absl::StrCat(path, ": no such file"));
    return absl::PermissionDeniedError(absl::StrCat(path, ": cannot open: ", ErrnoText()));
  }
  struct stat st;
  if (fstat(fd, &st) != 0) {
    const std::string err = ErrnoText();
    close(fd);
    return absl::InternalError(absl::StrCat(path, ": fstat: ", err));
  }
  if (!S_ISREG(st.st_mode)) {
    close(fd);
    return absl::InvalidArgumentError(absl::StrCat(path, ": not a regular file"));
  }
  auto mapping = std::make_shared<Mapping>();
  if (st.st_size > 0) {  // mmap refuses a length of 0; the empty file is reported below
    // Private and writable but over a read-only descriptor: the file can
    // never change, and a caller writing into a weight tensor gets its own
    // page copies instead of a segfault.
    void* addr = mmap(nullptr, st.st_size, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 0);
    if (addr == MAP_FAILED) {
      const std::string err = ErrnoText();
      close(fd);
      return absl::InternalError(absl::StrCat(path, ": mmap: ", err));
    }
    mapping->addr = addr;
    mapping->size = static_cast<size_t>(st.st_size);
  }
  close(fd);
  if (path.ends_with(".zst")) {
    ASSIGN_OR_RETURN(mapping, Decompress(path, *mapping));
  }
  return Parse(path, std::move(mapping));
}

absl::StatusOr<std::shared_ptr<SafetensorsFile::Mapping>> SafetensorsFile::Decompress(
    const std::string& path, const Mapping& compressed) {
  const unsigned long long declared =
      DeclaredZstdSize(static_cast<const uint8_t*>(compressed.addr), compressed.size);
  if (declared == ZSTD_CONTENTSIZE_ERROR) {
    return absl::InvalidArgumentError(
        absl::StrCat(path, ": is not a zstd stream, or is a truncated one"));
  }
  if (declared == ZSTD_CONTENTSIZE_UNKNOWN) {
    return absl::InvalidArgumentError(
        absl::StrCat(path, ": was written without its decompressed size (compress with the zstd "
                           "command-line tool)"));
  }
  if (declared > kMaxDecompressedBytes) {
    return absl::InvalidArgumentError(absl::StrCat(path, ": declares ", declared,
                                                   " decompressed bytes, over the limit of ",
                                                   kMaxDecompressedBytes));
  }
  auto out = std::make_shared<Mapping>();
  if (declared > 0) {
    void* addr =
        mmap(nullptr, declared, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (addr == MAP_FAILED) {
      return absl::ResourceExhaustedError(
          absl::StrCat(path, ": cannot map ", declared, " bytes to decompress into: ", ErrnoText()));
    }
    out->addr = addr;
    out->size = declared;
  }
  const size_t n = ZSTD_decompress(out->addr, out->size, compressed.addr, compressed.size);
  if (ZSTD_isError(n)) {
    return absl::InvalidArgumentError(
        absl::StrCat(path, ": corrupt zstd stream: ", ZSTD_getErrorName(n)));
  }
  if (n != declared) {
    return absl::InvalidArgumentError(absl::StrCat(
        path, ": corrupt zstd stream: ", n, " bytes decompressed, ", declared, " declared"));
  }
  return out;
}

absl::StatusOr<SafetensorsFile> SafetensorsFile::Parse(const std::string& path,
                                                       std::shared_ptr<Mapping> mapping) {
  const uint64_t file_size = mapping->size;
  if (file_size < 8) {
    return absl::InvalidArgumentError(absl::StrCat(
        path, ": file is ", file_size, " bytes, too short for the 8-byte header length"));
  }
  uint8_t* base = static_cast<uint8_t*>(mapping->addr);

  uint64_t header_len = 0;
  std::memcpy(&header_len, base, 8);  // little-endian (static_assert above)
  if (header_len > kMaxHeaderBytes) {
    return absl::InvalidArgumentError(absl::StrCat(
        path, ": header length ", header_len, " exceeds the limit of ", kMaxHeaderBytes, " bytes"));
  }
  if (header_len > file_size - 8) {
    return absl::InvalidArgumentError(absl::StrCat(path, ": header length ", header_len,
                                                   " is larger than the file allows (",
                                                   file_size - 8, " bytes after the length)"));
  }
  const char* hbegin = reinterpret_cast<const char*>(base + 8);
  const char* hend = hbegin + header_len;

  // Duplicate keys are silently merged by the JSON library; catch them with
  // a parse callback (one key set per open object).
  std::vector<std::set<std::string>> open_objects;
  std::string duplicate;
  json::parser_callback_t cb = [&](int depth, json::parse_event_t event, json& parsed) {
    if (event == json::parse_event_t::object_start) {
      open_objects.emplace_back();
    } else if (event == json::parse_event_t::object_end) {
      if (!open_objects.empty()) open_objects.pop_back();
    } else if (event == json::parse_event_t::key && !open_objects.empty() && parsed.is_string()) {
      if (!open_objects.back().insert(parsed.get<std::string>()).second && duplicate.empty()) {
        duplicate = parsed.get<std::string>();
      }
    }
    return true;
  };
  json header;
  try {
    header = json::parse(hbegin, hend, cb);
  } catch (const std::exception& e) {
    return absl::InvalidArgumentError(absl::StrCat(path, ": header is not valid JSON: ", e.what()));
  }
  if (!header.is_object()) {
    return absl::InvalidArgumentError(absl::StrCat(path, ": header is not a JSON object"));
  }
  if (!duplicate.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat(path, ": header has the key \"", duplicate, "\" more than once"));
  }

  SafetensorsFile file;
  file.path_ = path;
  file.data_size_ = file_size - 8 - header_len;
  file.data_ = base + 8 + header_len;

  try {
    for (auto it = header.begin(); it != header.end(); ++it) {
      const std::string& name = it.key();
      const json& v = it.value();
      if (name == "__metadata__") {
        if (!v.is_object()) {
          return absl::InvalidArgumentError(
              absl::StrCat(path, ": \"__metadata__\" must be an object of strings"));
        }
        for (auto m = v.begin(); m != v.end(); ++m) {
          if (!m.value().is_string()) {
            return absl::InvalidArgumentError(absl::StrCat(path, ": \"__metadata__\" value for \"",
                                                           m.key(), "\" is not a string"));
          }
          file.metadata_[m.key()] = m.value().get<std::string>();
        }
        continue;
      }
      auto bad = [&](std::string_view problem) {
        return absl::InvalidArgumentError(
            absl::StrCat(path, ": tensor \"", name, "\": ", std::string(problem)));
      };
      if (name.empty()) return bad("empty tensor name");
      if (!v.is_object()) return bad("entry is not a JSON object");
      TensorInfo info;
      info.name = name;

      auto d = v.find("dtype");
      if (d == v.end() || !d->is_string()) return bad("missing or non-string \"dtype\"");
      info.dtype_name = d->get<std::string>();
      if (!ParseStDType(info.dtype_name, &info.dtype)) {
        return bad(absl::StrCat("unknown dtype \"", info.dtype_name, "\""));
      }

      auto s = v.find("shape");
      if (s == v.end() || !s->is_array()) return bad("missing or non-array \"shape\"");
      uint64_t numel = 1;
      bool overflow = false;
      for (const json& dim : *s) {
        uint64_t n = 0;
        if (!ReadNonNegative(dim, &n)) {
          return bad(absl::StrCat("shape ", s->dump(), " must hold non-negative integers"));
        }
        info.shape.push_back(static_cast<int64_t>(n));
        if (__builtin_mul_overflow(numel, n, &numel)) overflow = true;
      }
      uint64_t nbytes = 0;
      if (overflow || numel > static_cast<uint64_t>(std::numeric_limits<int64_t>::max()) ||
          __builtin_mul_overflow(numel, StDTypeSize(info.dtype), &nbytes)) {
        return bad(absl::StrCat("shape ", s->dump(), " overflows 64-bit size arithmetic"));
      }

      auto o = v.find("data_offsets");
      if (o == v.end() || !o->is_array() || o->size() != 2 ||
          !ReadNonNegative((*o)[0], &info.begin) || !ReadNonNegative((*o)[1], &info.end)) {
        return bad("\"data_offsets\" must be [begin, end] with non-negative integers");
      }
      if (info.begin > info.end) {
        return bad(absl::StrCat("data_offsets [", info.begin, ", ", info.end, "] has begin > end"));
      }
      if (info.end > file.data_size_) {
        return bad(absl::StrCat("data_offsets [", info.begin, ", ", info.end,
                                "] run past the data section (", file.data_size_, " bytes)"));
      }
      if (info.end - info.begin != nbytes) {
        return bad(absl::StrCat("data_offsets [", info.begin, ", ", info.end, "] hold ",
                                info.end - info.begin, " bytes but shape ", s->dump(), " of ",
                                info.dtype_name, " needs ", nbytes));
      }
      file.tensors_.push_back(std::move(info));
    }
  } catch (const std::exception& e) {  // defensive: a JSON accessor on a wrong type
    return absl::InvalidArgumentError(absl::StrCat(path, ": malformed header: ", e.what()));
  }

  // Overlap check: sorted by begin, each non-empty range must start at or
  // after the previous one's end.
  std::vector<const TensorInfo*> by_offset;
  for (const TensorInfo& t : file.tensors_) {
    if (t.end > t.begin) by_offset.push_back(&t);
  }
  std::sort(by_offset.begin(), by_offset.end(),
            [](const TensorInfo* a, const TensorInfo* b) { return a->begin < b->begin; });
  for (size_t i = 1; i < by_offset.size(); ++i) {
    if (by_offset[i]->begin < by_offset[i - 1]->end) {
      return absl::InvalidArgumentError(absl::StrCat(
          path, ": tensors \"", by_offset[i - 1]->name, "\" [", by_offset[i - 1]->begin, ", ",
          by_offset[i - 1]->end, ") and \"", by_offset[i]->name, "\" [", by_offset[i]->begin, ", ",
          by_offset[i]->end, ") overlap"));
    }
  }
  // json objects iterate in key order already; keep the guarantee explicit.
  std::sort(file.tensors_.begin(), file.tensors_.end(),
            [](const TensorInfo& a, const TensorInfo& b) { return a.name < b.name; });
  file.mapping_ = std::move(mapping);
  return file;
}

const SafetensorsFile::TensorInfo* SafetensorsFile::Find(std::string_view name) const {
  auto it = std::lower_bound(tensors_.begin(), tensors_.end(), name,
                             [](const TensorInfo& t, std::string_view n) { return t.name < n; });
  if (it == tensors_.end() || it->name != name) return nullptr;
  return &*it;
}

absl::StatusOr<Tensor> SafetensorsFile::LoadRaw(std::string_view name) const {
  const TensorInfo* info = Find(name);
  if (info == nullptr) {
    return absl::NotFoundError(absl::StrCat(path_, ": no tensor \"", std::string(name), "\""));
  }
  DType dtype;
  switch (info->dtype) {
    case StDType::kF32:
      dtype = DType::kF32;
      break;
    case StDType::kF16:
      dtype = DType::kF16;
      break;
    case StDType::kBF16:
      dtype = DType::kBF16;
      break;
    default:
      return absl::InvalidArgumentError(absl::StrCat(path_, ": tensor \"", std::string(name),
                                                     "\" has dtype ", info->dtype_name,
                                                     "; only F32, F16 and BF16 can be loaded"));
  }
  uint8_t* p = data_ + info->begin;
  if (reinterpret_cast<uintptr_t>(p) % SizeOf(dtype) == 0) {
    return Tensor::Borrow(p, info->shape, dtype, Device::kCpu, mapping_);
  }
  Tensor copy = Tensor::Empty(info->shape, dtype);
  if (copy.nbytes() > 0) std::memcpy(copy.raw_data(), p, copy.nbytes());
  return copy;
}

absl::StatusOr<Tensor> SafetensorsFile::Load(std::string_view name) const {
  ASSIGN_OR_RETURN(Tensor raw, LoadRaw(name));
  return raw.ToF32();
}

}  // namespace neodb::encoder
