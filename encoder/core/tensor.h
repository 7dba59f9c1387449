#pragma once
// Tensor: a shape, an element type, a device and a reference-counted buffer.
//
// A Tensor is a cheap handle: copies share the buffer (like a shared_ptr).
// Views (Reshape, Rows) share it too. Memory on the CPU is 64-byte aligned.
// A tensor may also borrow memory it does not own (an mmap'd checkpoint, a
// cudaMalloc'd block): the `owner` keeps that memory alive and releases it.
// Not thread-safe for concurrent writes; concurrent reads are fine.

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "common/status_macros.h"
#include "encoder/core/dtype.h"

namespace neodb::encoder {

using Shape = std::vector<int64_t>;

class Tensor {
 public:
  Tensor() = default;

  // Uninitialised CPU tensor.
  static Tensor Empty(Shape shape, DType dtype);
  // Zero-filled CPU tensor.
  static Tensor Zeros(Shape shape, DType dtype);
  // A tensor over `data`, which stays valid while `owner` lives. No copy.
  static Tensor Borrow(void* data, Shape shape, DType dtype, Device device,
                       std::shared_ptr<void> owner);

  bool defined() const { return data_ != nullptr || numel() == 0; }
  const Shape& shape() const { return shape_; }
  int rank() const { return static_cast<int>(shape_.size()); }
  int64_t dim(int i) const;  // negative i counts from the end
  int64_t numel() const;
  size_t nbytes() const { return static_cast<size_t>(numel()) * SizeOf(dtype_); }
  DType dtype() const { return dtype_; }
  Device device() const { return device_; }

  void* raw_data() { return data_; }
  const void* raw_data() const { return data_; }
  // Typed access. REQUIRES: T matches dtype() (CHECKed).
  template <typename T> T* data();
  template <typename T> const T* data() const;

  // Same buffer, new shape. REQUIRES: same numel.
  Tensor Reshape(Shape shape) const;
  // Rows [begin, end) of dimension 0, sharing the buffer.
  Tensor Rows(int64_t begin, int64_t end) const;
  // A CPU F32 copy (converting F16/BF16); a CPU F32 tensor is returned as is.
  // REQUIRES: device() == kCpu.
  Tensor ToF32() const;
  // A deep copy on the CPU.
  Tensor Clone() const;

  std::string DebugString() const;  // "F32[3, 768] cpu"

 private:
  std::shared_ptr<void> owner_;
  void* data_ = nullptr;
  Shape shape_;
  DType dtype_ = DType::kF32;
  Device device_ = Device::kCpu;
};

namespace internal {
// Whether element type T may view a tensor of dtype `t`. uint16_t views both
// half formats (the caller knows which one it holds).
template <typename T> bool Matches(DType t);
template <> inline bool Matches<float>(DType t) { return t == DType::kF32; }
template <> inline bool Matches<double>(DType t) { return t == DType::kF64; }
template <> inline bool Matches<int32_t>(DType t) { return t == DType::kI32; }
template <> inline bool Matches<uint16_t>(DType t) { return t == DType::kF16 || t == DType::kBF16; }
}  // namespace internal

template <typename T> T* Tensor::data() {
  NEODB_CHECK(internal::Matches<T>(dtype_));
  return static_cast<T*>(data_);
}
template <typename T> const T* Tensor::data() const {
  NEODB_CHECK(internal::Matches<T>(dtype_));
  return static_cast<const T*>(data_);
}

}  // namespace neodb::encoder
