#pragma once
// DeviceBuffer: one cudaMalloc'd block, freed by its destructor. Move-only.
// The encoder's allocator is deliberately simple: weights are uploaded once
// into their own buffers, and activations live in a few buffers that grow
// (never shrink) to the largest batch seen, so steady-state forward passes
// allocate nothing.

#include <cstddef>

#include "common/status_macros.h"

namespace neodb::encoder::cuda {

class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  ~DeviceBuffer();
  DeviceBuffer(DeviceBuffer&& other) noexcept;
  DeviceBuffer& operator=(DeviceBuffer&& other) noexcept;
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;

  // A buffer of `bytes` bytes (uninitialised). RESOURCE_EXHAUSTED when the
  // device is out of memory.
  static absl::StatusOr<DeviceBuffer> Allocate(size_t bytes);

  // Grows to at least `bytes` (contents are NOT preserved). No-op when the
  // buffer is already large enough.
  absl::Status Reserve(size_t bytes);

  void* get() const { return ptr_; }
  template <typename T>
  T* as() const {
    return static_cast<T*>(ptr_);
  }
  size_t size() const { return bytes_; }

 private:
  void Release();
  void* ptr_ = nullptr;
  size_t bytes_ = 0;
};

}  // namespace neodb::encoder::cuda
