#pragma once
// Writes a .safetensors file (format in safetensors.h): header keys and data
// in name order, the JSON header padded with spaces to a multiple of 8 so
// that F32 data starts 8-byte aligned in the file (and in an mmap of it).
// Atomic: written under a temporary name, fsynced and renamed.

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "common/status_macros.h"
#include "encoder/core/tensor.h"

namespace neodb::encoder {

struct NamedTensor {
  std::string name;
  Tensor tensor;  // CPU, F32/F16/BF16
};

// Stores every tensor as `dtype` (F32, F16 or BF16), converting as needed.
// REQUIRES nothing of the input order; duplicate names are INVALID_ARGUMENT.
absl::Status WriteSafetensors(const std::string& path, std::vector<NamedTensor> tensors,
                              DType dtype, const std::map<std::string, std::string>& metadata = {});

}  // namespace neodb::encoder
