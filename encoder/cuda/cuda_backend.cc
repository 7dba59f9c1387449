#include "encoder/cuda/cuda_backend.h"

#include "absl/strings/str_cat.h"
#include "encoder/cuda/cuda_check.h"
#include "encoder/cuda/cuda_context.h"
#include "encoder/cuda/cuda_neobert.h"
#include "encoder/cuda/cuda_weights.h"

namespace neodb::encoder {
namespace {

using cuda::CudaContext;
using cuda::CudaNeoBert;
using cuda::CudaWeights;

class CudaBackend final : public Backend {
 public:
  CudaBackend(std::unique_ptr<CudaContext> ctx, std::unique_ptr<CudaWeights> weights)
      : ctx_(std::move(ctx)), weights_(std::move(weights)), model_(ctx_.get(), weights_.get()) {}

  absl::StatusOr<Tensor> HiddenStates(const PackedBatch& batch) override {
    RETURN_IF_ERROR(ctx_->Activate());
    RETURN_IF_ERROR(model_.Validate(batch));
    RETURN_IF_ERROR(model_.Forward(batch));
    Tensor out = Tensor::Empty({batch.total_tokens(), weights_->hidden}, DType::kF32);
    if (out.numel() > 0) {
      CUDA_RETURN_IF_ERROR(cudaMemcpyAsync(out.raw_data(), model_.hidden(), out.nbytes(),
                                           cudaMemcpyDeviceToHost, ctx_->stream()));
    }
    RETURN_IF_ERROR(ctx_->Synchronize());
    return out;
  }

  absl::StatusOr<Tensor> Pool(const PackedBatch& batch, Pooling pooling) override {
    RETURN_IF_ERROR(ctx_->Activate());
    RETURN_IF_ERROR(model_.Validate(batch));
    RETURN_IF_ERROR(model_.Forward(batch));
    RETURN_IF_ERROR(model_.Pool(pooling));
    Tensor out = Tensor::Empty({batch.batch_size(), weights_->hidden}, DType::kF32);
    if (out.numel() > 0) {
      CUDA_RETURN_IF_ERROR(cudaMemcpyAsync(out.raw_data(), model_.pooled(), out.nbytes(),
                                           cudaMemcpyDeviceToHost, ctx_->stream()));
    }
    RETURN_IF_ERROR(ctx_->Synchronize());
    return out;
  }

  Device device() const override { return Device::kCuda; }

 private:
  std::unique_ptr<CudaContext> ctx_;
  std::unique_ptr<CudaWeights> weights_;
  CudaNeoBert model_;
};

}  // namespace

bool CudaBackendCompiled() { return true; }

absl::StatusOr<int> CudaDeviceCount() { return cuda::CountCudaDevices(); }

absl::StatusOr<std::unique_ptr<Backend>> MakeCudaBackend(
    std::shared_ptr<const NeoBertWeights> weights, const BackendOptions& options) {
  if (weights == nullptr) return absl::InvalidArgumentError("MakeCudaBackend: no weights");
  ASSIGN_OR_RETURN(std::unique_ptr<CudaContext> ctx, CudaContext::Create(options.device_index));
  ASSIGN_OR_RETURN(CudaWeights uploaded, CudaWeights::Upload(*weights, options.compute_dtype));
  auto w = std::make_unique<CudaWeights>(std::move(uploaded));
  return std::unique_ptr<Backend>(new CudaBackend(std::move(ctx), std::move(w)));
}

}  // namespace neodb::encoder
