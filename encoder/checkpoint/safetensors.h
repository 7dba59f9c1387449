#pragma once
// SafetensorsFile: a read-only view of a .safetensors file (NEOBERT.md §2).
//
// Format: 8-byte little-endian header length N, N bytes of JSON
//   {name: {"dtype", "shape", "data_offsets": [begin, end]}, "__metadata__": {str: str}},
// then the data section; offsets are relative to the start of the data.
//
// Open() maps the file and validates the whole header before anything is
// read: header length against the file size and kMaxHeaderBytes, JSON
// syntax, a known dtype, a shape of non-negative integers, offsets inside the
// data section, end − begin == product(shape) · sizeof(dtype) (overflow
// checked), no two tensors overlapping, no duplicate names, metadata made of
// strings. A malformed file is an error naming the file, the tensor and the
// problem, never a crash or an out-of-bounds read.
//
// The mapping is private (copy-on-write) over a file opened read-only: the
// file is never modified, and no data is copied until someone writes into a
// tensor. Tensors returned by Load keep the mapping alive, so they may
// outlive the SafetensorsFile. Truncating the file while it is mapped is
// undefined (SIGBUS), as for any mmap reader.
//
// A path ending in ".zst" names a zstd stream holding a safetensors file (how
// the default model is shipped: its many all-zero F16 blocks compress well).
// Every frame must declare its decompressed size (the zstd command-line tool
// writes it), at most kMaxDecompressedBytes in all. Open decompresses the
// whole stream into private anonymous memory, which then is the mapping, and
// validates it exactly as above; tensors keep it alive as before. A stream
// that is not zstd, is truncated or corrupt is an error naming the file.
//
// Thread-safety: immutable after Open; concurrent Load calls are fine.

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "common/status_macros.h"
#include "encoder/core/tensor.h"

namespace neodb::encoder {

// The dtypes the safetensors format defines. Only F32, F16 and BF16 load;
// the others are recognised so that a file holding them gets a clear error.
enum class StDType : uint8_t {
  kF32,
  kF16,
  kBF16,
  kF64,
  kI64,
  kI32,
  kI16,
  kI8,
  kU64,
  kU32,
  kU16,
  kU8,
  kBool,
  kF8E4M3,
  kF8E5M2,
};

class SafetensorsFile {
 public:
  // A header larger than this is refused (the release's header is ~20 KB).
  static constexpr uint64_t kMaxHeaderBytes = 100ull << 20;
  // A .zst declaring more decompressed bytes than this is refused: the size
  // comes from the (untrusted) frame headers, and a hostile one must not make
  // us reserve terabytes. NeoBERT's 250M parameters are 1 GB in F32.
  static constexpr uint64_t kMaxDecompressedBytes = 16ull << 30;

  struct TensorInfo {
    std::string name;
    StDType dtype;
    std::string dtype_name;  // as spelled in the file ("F32")
    Shape shape;
    uint64_t begin = 0;  // byte offsets in the data section, end exclusive
    uint64_t end = 0;
  };

  static absl::StatusOr<SafetensorsFile> Open(const std::string& path);

  const std::string& path() const { return path_; }
  // All tensors, sorted by name.
  const std::vector<TensorInfo>& tensors() const { return tensors_; }
  // nullptr when absent.
  const TensorInfo* Find(std::string_view name) const;
  const std::map<std::string, std::string>& metadata() const { return metadata_; }

  // The tensor as a CPU F32 tensor. F32 data 4-byte aligned in the mapping is
  // borrowed (no copy); unaligned F32 is copied; F16/BF16 are converted.
  // NOT_FOUND for an unknown name, INVALID_ARGUMENT for other dtypes.
  absl::StatusOr<Tensor> Load(std::string_view name) const;
  // The tensor in its stored dtype (F32, F16 or BF16), borrowed when aligned.
  absl::StatusOr<Tensor> LoadRaw(std::string_view name) const;

  // The raw bytes of a tensor inside the mapping (for tests and hashing).
  const uint8_t* data_of(const TensorInfo& info) const { return data_ + info.begin; }

 private:
  struct Mapping;
  SafetensorsFile() = default;

  // The safetensors bytes held in the zstd stream `compressed`, read from `path`.
  static absl::StatusOr<std::shared_ptr<Mapping>> Decompress(const std::string& path,
                                                             const Mapping& compressed);
  // Validates the safetensors bytes in `mapping` (read from `path`) and
  // indexes their tensors; the result keeps `mapping`.
  static absl::StatusOr<SafetensorsFile> Parse(const std::string& path,
                                               std::shared_ptr<Mapping> mapping);

  std::string path_;
  std::shared_ptr<Mapping> mapping_;
  uint8_t* data_ = nullptr;  // start of the data section inside the mapping
  uint64_t data_size_ = 0;
  std::vector<TensorInfo> tensors_;
  std::map<std::string, std::string> metadata_;
};

// Element size of a safetensors dtype (1 for BOOL and F8).
size_t StDTypeSize(StDType t);
// "F32" → kF32 etc.; false for a name the format does not define.
bool ParseStDType(std::string_view name, StDType* out);

}  // namespace neodb::encoder
