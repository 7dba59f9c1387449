#include "encoder/cuda/device_buffer.h"

#include <utility>

#include "encoder/cuda/cuda_check.h"

namespace neodb::encoder::cuda {

DeviceBuffer::~DeviceBuffer() { Release(); }

DeviceBuffer::DeviceBuffer(DeviceBuffer&& other) noexcept
    : ptr_(std::exchange(other.ptr_, nullptr)), bytes_(std::exchange(other.bytes_, 0)) {}

DeviceBuffer& DeviceBuffer::operator=(DeviceBuffer&& other) noexcept {
  if (this != &other) {
    Release();
    ptr_ = std::exchange(other.ptr_, nullptr);
    bytes_ = std::exchange(other.bytes_, 0);
  }
  return *this;
}

void DeviceBuffer::Release() {
  // cudaFree synchronises the device; an error here (a sticky error from an
  // earlier fault) has already been reported by the call that caused it.
  if (ptr_ != nullptr) cudaFree(ptr_);
  ptr_ = nullptr;
  bytes_ = 0;
}

absl::StatusOr<DeviceBuffer> DeviceBuffer::Allocate(size_t bytes) {
  DeviceBuffer buf;
  RETURN_IF_ERROR(buf.Reserve(bytes));
  return buf;
}

absl::Status DeviceBuffer::Reserve(size_t bytes) {
  if (bytes <= bytes_ && ptr_ != nullptr) return absl::OkStatus();
  Release();
  if (bytes == 0) bytes = 256;  // keep get() non-null for empty tensors
  void* p = nullptr;
  CUDA_RETURN_IF_ERROR(cudaMalloc(&p, bytes));
  ptr_ = p;
  bytes_ = bytes;
  return absl::OkStatus();
}

}  // namespace neodb::encoder::cuda
