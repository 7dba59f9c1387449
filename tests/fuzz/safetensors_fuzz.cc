// Fuzzes SafetensorsFile::Open (the header parser of model.safetensors, and
// the zstd checks of model.safetensors.zst) and Load/LoadRaw of every tensor
// it accepts. Oracle (safetensors.h): every accepted tensor lies inside the
// file's data section and has exactly product(shape) * sizeof(dtype) bytes;
// loading it reads only those bytes.
#include <cstring>

#include "encoder/checkpoint/safetensors.h"
#include "tests/fuzz/fuzz_util.h"

using neodb::encoder::SafetensorsFile;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  // The same bytes as a model.safetensors.zst: nearly always refused by the
  // zstd checks, whose error paths (and the decompression) this exercises.
  (void)SafetensorsFile::Open(neodb::fuzz::WriteScratchFile("model.safetensors.zst",
                                                            neodb::fuzz::AsView(data, size)));
  const std::string path = neodb::fuzz::WriteScratchFile("model.safetensors",
                                                         neodb::fuzz::AsView(data, size));
  absl::StatusOr<SafetensorsFile> file = SafetensorsFile::Open(path);
  if (!file.ok()) return 0;
  FUZZ_CHECK(size >= 8);
  uint64_t header_len;
  std::memcpy(&header_len, data, 8);
  FUZZ_CHECK(header_len <= size - 8);
  const uint64_t data_size = size - 8 - header_len;
  for (const SafetensorsFile::TensorInfo& info : file->tensors()) {
    FUZZ_CHECK(info.begin <= info.end && info.end <= data_size);
    uint64_t numel = 1;
    for (int64_t d : info.shape) {
      FUZZ_CHECK(d >= 0);
      numel *= static_cast<uint64_t>(d);
    }
    FUZZ_CHECK(info.end - info.begin == numel * neodb::encoder::StDTypeSize(info.dtype));
    FUZZ_CHECK(file->Find(info.name) == &info);
    absl::StatusOr<neodb::encoder::Tensor> raw = file->LoadRaw(info.name);
    if (raw.ok()) FUZZ_CHECK(raw->nbytes() == info.end - info.begin);
    absl::StatusOr<neodb::encoder::Tensor> f32 = file->Load(info.name);
    if (f32.ok()) {
      FUZZ_CHECK(static_cast<uint64_t>(f32->numel()) == numel);
      // Touch every float: ASan catches a view past the mapping's end.
      const float* p = f32->data<float>();
      volatile float sink = 0;
      for (uint64_t i = 0; i < numel; ++i) sink = sink + p[i];
    }
  }
  return 0;
}
