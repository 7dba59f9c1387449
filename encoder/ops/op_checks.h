#pragma once
// Shape/dtype checks shared by the op fronts. A mismatch is a programmer
// error (the model wires the ops), so it aborts with the offending tensor.

#include <cstdio>
#include <cstdlib>
#include <string>

#include "encoder/core/tensor.h"

namespace neodb::encoder::ops::internal {

// Aborts unless `t` is F32 with exactly `shape`.
inline void CheckF32(const Tensor& t, const Shape& shape, const char* what) {
  if (t.dtype() == DType::kF32 && t.shape() == shape) return;
  std::string want = "F32[";
  for (size_t i = 0; i < shape.size(); ++i) {
    want += (i ? ", " : "") + std::to_string(shape[i]);
  }
  want += "]";
  std::fprintf(stderr, "op argument %s: got %s, want %s\n", what, t.DebugString().c_str(),
               want.c_str());
  std::abort();
}

// Aborts unless every tensor lives on `device`.
template <typename... Ts>
void CheckDevice(Device device, const Ts&... ts) {
  const bool ok = ((ts.device() == device) && ...);
  NEODB_CHECK(ok && "op arguments on different devices");
}

// The op fronts call this when a tensor is on a device that has no body for
// the op in this build (CUDA bodies live in *_gpu.cu and are wired here by
// the CUDA backend).
[[noreturn]] inline void NoBody(const char* op, Device device) {
  std::fprintf(stderr, "op %s: no body for device %s in this build\n", op,
               std::string(DeviceName(device)).c_str());
  std::abort();
}

}  // namespace neodb::encoder::ops::internal
