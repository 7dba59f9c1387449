#pragma once
// CudaContext: the explicit execution context of the CUDA backend — one
// device, one stream, one cuBLASLt handle and its workspace. Nothing in the
// backend uses a global or the default stream; every kernel and GEMM takes
// the context (or its stream) as an argument.
//
// Thread-safety: not thread-safe; one forward pass at a time (Encoder
// serialises calls). Owns its stream, handle and workspace.

#include <cublasLt.h>
#include <cuda_runtime.h>

#include <memory>
#include <string>

#include "common/status_macros.h"
#include "encoder/cuda/device_buffer.h"

namespace neodb::encoder::cuda {

struct DeviceInfo {
  int index = 0;
  std::string name;
  int cc_major = 0;
  int cc_minor = 0;
  int sm_count = 0;
  size_t total_memory = 0;
};

// The number of usable CUDA devices. UNAVAILABLE with "no CUDA device: …"
// (the driver's reason) when there is none or no driver is installed.
absl::StatusOr<int> CountCudaDevices();

class CudaContext {
 public:
  // Selects device `device_index`, creates the stream, the cuBLASLt handle and
  // a `workspace_bytes` workspace. Errors: UNAVAILABLE (no device / driver),
  // INVALID_ARGUMENT (index out of range), FAILED_PRECONDITION (this build
  // has no kernel image for the device's architecture).
  static absl::StatusOr<std::unique_ptr<CudaContext>> Create(int device_index,
                                                             size_t workspace_bytes = 32 << 20);
  ~CudaContext();
  CudaContext(const CudaContext&) = delete;
  CudaContext& operator=(const CudaContext&) = delete;

  // Makes this context's device current on the calling thread (call at the
  // start of every public entry point: another thread may have switched).
  absl::Status Activate() const;
  absl::Status Synchronize() const;

  cudaStream_t stream() const { return stream_; }
  cublasLtHandle_t lt() const { return lt_; }
  void* workspace() const { return workspace_.get(); }
  size_t workspace_bytes() const { return workspace_.size(); }
  const DeviceInfo& info() const { return info_; }

 private:
  CudaContext() = default;
  DeviceInfo info_;
  cudaStream_t stream_ = nullptr;
  cublasLtHandle_t lt_ = nullptr;
  DeviceBuffer workspace_;
};

}  // namespace neodb::encoder::cuda
