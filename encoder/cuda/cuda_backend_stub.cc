// MakeCudaBackend in a build without CUDA (NEODB_WITH_CUDA=OFF): always
// UNAVAILABLE, so callers need no #ifdef and report the reason.
#include "encoder/cuda/cuda_backend.h"

namespace neodb::encoder {

bool CudaBackendCompiled() { return false; }

absl::StatusOr<int> CudaDeviceCount() {
  return absl::UnavailableError(
      "no CUDA device: this neodb was built without CUDA (configure with -DNEODB_WITH_CUDA=ON)");
}

absl::StatusOr<std::unique_ptr<Backend>> MakeCudaBackend(
    std::shared_ptr<const NeoBertWeights> weights, const BackendOptions& options) {
  return absl::UnavailableError(
      "no CUDA device: this neodb was built without CUDA (configure with -DNEODB_WITH_CUDA=ON)");
}

}  // namespace neodb::encoder
