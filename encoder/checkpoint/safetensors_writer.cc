#include "encoder/checkpoint/safetensors_writer.h"

#include <algorithm>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "common/atomic_file.h"
#include "nlohmann/json.hpp"

namespace neodb::encoder {
namespace {

constexpr int64_t kChunk = 1 << 18;  // elements converted per write

absl::Status AppendAs(AtomicFileWriter& w, const Tensor& t, DType dtype) {
  const Tensor f32 = t.ToF32();
  const float* src = f32.data<float>();
  const int64_t n = f32.numel();
  if (dtype == DType::kF32) return w.Append(src, static_cast<size_t>(n) * 4);
  std::vector<uint16_t> buf(static_cast<size_t>(std::min(n, kChunk)));
  for (int64_t i = 0; i < n; i += kChunk) {
    const int64_t m = std::min(kChunk, n - i);
    for (int64_t k = 0; k < m; ++k) {
      buf[k] = dtype == DType::kF16 ? F32ToF16(src[i + k]) : F32ToBF16(src[i + k]);
    }
    RETURN_IF_ERROR(w.Append(buf.data(), static_cast<size_t>(m) * 2));
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status WriteSafetensors(const std::string& path, std::vector<NamedTensor> tensors,
                              DType dtype, const std::map<std::string, std::string>& metadata) {
  if (dtype != DType::kF32 && dtype != DType::kF16 && dtype != DType::kBF16) {
    return absl::InvalidArgumentError(
        absl::StrCat("safetensors: cannot store dtype ", std::string(DTypeName(dtype))));
  }
  std::sort(tensors.begin(), tensors.end(),
            [](const NamedTensor& a, const NamedTensor& b) { return a.name < b.name; });
  nlohmann::json header = nlohmann::json::object();
  uint64_t offset = 0;
  for (size_t i = 0; i < tensors.size(); ++i) {
    const NamedTensor& nt = tensors[i];
    if (i > 0 && tensors[i - 1].name == nt.name) {
      return absl::InvalidArgumentError(absl::StrCat("safetensors: duplicate tensor ", nt.name));
    }
    if (nt.name.empty() || nt.name == "__metadata__") {
      return absl::InvalidArgumentError(
          absl::StrCat("safetensors: invalid tensor name \"", nt.name, "\""));
    }
    const Tensor& t = nt.tensor;
    if (t.device() != Device::kCpu || !t.defined() ||
        (t.dtype() != DType::kF32 && t.dtype() != DType::kF16 && t.dtype() != DType::kBF16)) {
      return absl::InvalidArgumentError(absl::StrCat("safetensors: tensor ", nt.name,
                                                     " must be a CPU F32/F16/BF16 tensor, is ",
                                                     t.DebugString()));
    }
    const uint64_t nbytes = static_cast<uint64_t>(t.numel()) * SizeOf(dtype);
    header[nt.name] = {{"dtype", std::string(DTypeName(dtype))},
                       {"shape", t.shape()},
                       {"data_offsets", {offset, offset + nbytes}}};
    offset += nbytes;
  }
  if (!metadata.empty()) header["__metadata__"] = metadata;
  std::string text = header.dump();
  text.append((8 - text.size() % 8) % 8, ' ');
  const uint64_t header_len = text.size();  // little-endian host (safetensors.cc asserts)

  ASSIGN_OR_RETURN(AtomicFileWriter w, AtomicFileWriter::Create(Env::Default(), path));
  RETURN_IF_ERROR(w.Append(&header_len, 8));
  RETURN_IF_ERROR(w.Append(text));
  for (const NamedTensor& nt : tensors) RETURN_IF_ERROR(AppendAs(w, nt.tensor, dtype));
  return w.Commit();
}

}  // namespace neodb::encoder
