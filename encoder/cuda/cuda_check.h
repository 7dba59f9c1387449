#pragma once
// Every CUDA runtime and cuBLAS(Lt) call goes through one of these macros,
// which turn an error code into an absl::Status naming the call, the file and
// the line. Kernel launches are checked with CUDA_RETURN_IF_LAUNCH_ERROR()
// (cudaGetLastError) right after the launch.

#include <cublasLt.h>
#include <cuda_runtime.h>

#include <string>

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "encoder/cuda/cublaslt_api.h"

namespace neodb::encoder::cuda {

inline absl::Status CudaStatus(cudaError_t err, const char* expr, const char* file, int line) {
  if (err == cudaSuccess) return absl::OkStatus();
  std::string msg = absl::StrCat(expr, " failed: ", cudaGetErrorName(err), " (",
                                 cudaGetErrorString(err), ") at ", file, ":", line);
  if (err == cudaErrorMemoryAllocation) return absl::ResourceExhaustedError(msg);
  if (err == cudaErrorNoDevice || err == cudaErrorInsufficientDriver) {
    return absl::UnavailableError(msg);
  }
  return absl::InternalError(msg);
}

inline absl::Status CublasStatus(cublasStatus_t st, const char* expr, const char* file, int line) {
  if (st == CUBLAS_STATUS_SUCCESS) return absl::OkStatus();
  std::string msg = absl::StrCat(expr, " failed: ", Lt().GetStatusName(st), " (",
                                 Lt().GetStatusString(st), ") at ", file, ":", line);
  if (st == CUBLAS_STATUS_ALLOC_FAILED) return absl::ResourceExhaustedError(msg);
  if (st == CUBLAS_STATUS_NOT_SUPPORTED) return absl::UnimplementedError(msg);
  return absl::InternalError(msg);
}

}  // namespace neodb::encoder::cuda

#define CUDA_RETURN_IF_ERROR(expr) \
  RETURN_IF_ERROR(::neodb::encoder::cuda::CudaStatus((expr), #expr, __FILE__, __LINE__))

#define CUBLAS_RETURN_IF_ERROR(expr) \
  RETURN_IF_ERROR(::neodb::encoder::cuda::CublasStatus((expr), #expr, __FILE__, __LINE__))

// After a <<<...>>> launch: reports a bad configuration or a sticky error.
#define CUDA_RETURN_IF_LAUNCH_ERROR() CUDA_RETURN_IF_ERROR(cudaGetLastError())
