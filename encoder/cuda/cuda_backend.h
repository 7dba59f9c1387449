#pragma once
// The CUDA backend: encoder/backend.h's Backend on one NVIDIA GPU.
//
// MakeCudaBackend uploads the weights once (GEMM weights in
// options.compute_dtype: BF16, F16 or F32; embeddings and norms in F32) and
// returns a Backend whose forward passes run entirely on the device; only
// the ids go up and the requested F32 result comes back.
//
// Errors (the caller then stays on the CPU and says why):
//   UNAVAILABLE          no CUDA device or driver ("no CUDA device: …"), also
//                        returned by builds without CUDA ("built without CUDA")
//   INVALID_ARGUMENT     options.device_index out of range, a bad compute
//                        dtype, weights whose shapes disagree with the config
//   FAILED_PRECONDITION  the GPU's architecture has no kernel image in this
//                        build (built for sm_90 + compute_90 PTX by default)
//   UNIMPLEMENTED        head_dim other than 64
//   RESOURCE_EXHAUSTED   not enough device memory for the weights
//
// The weights (and through them the mmap'd checkpoint) are kept alive by
// the backend only until the upload is done: the device copy is all it needs.
// Thread-safety: a Backend serves one call at a time (Encoder serialises).

#include <memory>

#include "common/status_macros.h"
#include "encoder/backend.h"
#include "encoder/checkpoint/weights.h"

namespace neodb::encoder {

absl::StatusOr<std::unique_ptr<Backend>> MakeCudaBackend(
    std::shared_ptr<const NeoBertWeights> weights, const BackendOptions& options);

// Whether this build contains the CUDA backend (false: MakeCudaBackend always
// returns UNAVAILABLE).
bool CudaBackendCompiled();

// The number of CUDA devices this process sees (cudaGetDeviceCount), at least
// 1 when OK. UNAVAILABLE with "no CUDA device: …" (the driver's reason, or
// "built without CUDA") when there is none.
absl::StatusOr<int> CudaDeviceCount();

}  // namespace neodb::encoder
