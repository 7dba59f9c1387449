#include "encoder/cuda/cuda_context.h"

#include "absl/strings/str_cat.h"
#include "encoder/cuda/cuda_check.h"
#include "encoder/cuda/kernels.h"

namespace neodb::encoder::cuda {

absl::StatusOr<int> CountCudaDevices() {
  int count = 0;
  cudaError_t err = cudaGetDeviceCount(&count);
  if (err != cudaSuccess) {
    // cudaGetDeviceCount leaves the error sticky-free but clear it anyway so
    // that a later unrelated check does not report it.
    (void)cudaGetLastError();
    return absl::UnavailableError(absl::StrCat("no CUDA device: ", cudaGetErrorName(err), " (",
                                               cudaGetErrorString(err), ")"));
  }
  if (count <= 0) {
    return absl::UnavailableError("no CUDA device: cudaGetDeviceCount reported 0 devices");
  }
  return count;
}

absl::StatusOr<std::unique_ptr<CudaContext>> CudaContext::Create(int device_index,
                                                                 size_t workspace_bytes) {
  ASSIGN_OR_RETURN(int count, CountCudaDevices());
  if (device_index < 0 || device_index >= count) {
    return absl::InvalidArgumentError(absl::StrCat("CUDA device index ", device_index,
                                                   " out of range: ", count, " device(s) visible"));
  }
  std::unique_ptr<CudaContext> ctx(new CudaContext());
  CUDA_RETURN_IF_ERROR(cudaSetDevice(device_index));
  cudaDeviceProp prop;
  CUDA_RETURN_IF_ERROR(cudaGetDeviceProperties(&prop, device_index));
  ctx->info_.index = device_index;
  ctx->info_.name = prop.name;
  ctx->info_.cc_major = prop.major;
  ctx->info_.cc_minor = prop.minor;
  ctx->info_.sm_count = prop.multiProcessorCount;
  ctx->info_.total_memory = prop.totalGlobalMem;

  // A binary built for sm_90 (+compute_90 PTX) cannot run on an older GPU:
  // say so instead of failing at the first launch.
  cudaError_t image = CheckKernelImage();
  if (image != cudaSuccess) {
    (void)cudaGetLastError();
    return absl::FailedPreconditionError(absl::StrCat(
        "CUDA device ", device_index, " (", prop.name, ", compute capability ", prop.major, ".",
        prop.minor, ") cannot run this build's kernels: ", cudaGetErrorString(image),
        ". Rebuild with CMAKE_CUDA_ARCHITECTURES including ", prop.major, prop.minor,
        " (bf16 tensor-core kernels need 8.0 or later)"));
  }
  if (prop.major < 8) {
    return absl::FailedPreconditionError(
        absl::StrCat("CUDA device ", prop.name, " has compute capability ", prop.major, ".",
                     prop.minor, "; the encoder needs 8.0 or later (bf16 tensor cores)"));
  }

  // cuBLASLt is opened here, once a device is known to be usable
  // (cublaslt_api.h says why it is not linked).
  RETURN_IF_ERROR(LoadCublasLt().status());
  CUDA_RETURN_IF_ERROR(cudaStreamCreateWithFlags(&ctx->stream_, cudaStreamNonBlocking));
  CUBLAS_RETURN_IF_ERROR(Lt().Create(&ctx->lt_));
  ASSIGN_OR_RETURN(ctx->workspace_, DeviceBuffer::Allocate(workspace_bytes));
  return ctx;
}

CudaContext::~CudaContext() {
  if (stream_ != nullptr) cudaStreamSynchronize(stream_);
  if (lt_ != nullptr) Lt().Destroy(lt_);
  if (stream_ != nullptr) cudaStreamDestroy(stream_);
}

absl::Status CudaContext::Activate() const {
  CUDA_RETURN_IF_ERROR(cudaSetDevice(info_.index));
  return absl::OkStatus();
}

absl::Status CudaContext::Synchronize() const {
  CUDA_RETURN_IF_ERROR(cudaStreamSynchronize(stream_));
  return absl::OkStatus();
}

}  // namespace neodb::encoder::cuda
