// MakeCudaArchTrainModel (cuda_train_model.h): each architecture's
// description over CudaTapeOps, the parameters, batch and gradients moved
// between the host's trainer and the device.
#include <mutex>
#include <vector>

#include "absl/strings/str_cat.h"
#include "encoder/cuda/cuda_check.h"
#include "encoder/cuda/cublaslt_api.h"
#include "encoder/models/bert_layers.h"
#include "encoder/models/neobert_layers.h"
#include "encoder/train/cuda/cuda_tape_ops.h"
#include "encoder/train/cuda/train_kernels.h"
#include "encoder/train/cuda_train_model.h"
#include "encoder/train/layer_stack.h"
#include "encoder/train/rope.h"
#include "encoder/train/train_weights.h"

namespace neodb::encoder::train {
namespace {

using cuda::CheckOk;
using cuda::CudaTape;
using cuda::CudaTapeOps;
using cuda::CudaTrainDevice;
using encoder::cuda::CudaContext;
using encoder::cuda::DeviceBuffer;

void HostToDevice(DeviceBuffer* dev, const float* host, int64_t n, cudaStream_t stream) {
  CheckOk(dev->Reserve(static_cast<size_t>(n) * sizeof(float)), "cudaMalloc");
  if (n == 0) return;
  CheckOk(encoder::cuda::CudaStatus(cudaMemcpyAsync(dev->get(), host, n * sizeof(float),
                                                    cudaMemcpyHostToDevice, stream),
                                    "cudaMemcpyAsync", __FILE__, __LINE__),
          "upload");
}

void DeviceToHost(float* host, const float* dev, int64_t n, cudaStream_t stream) {
  if (n == 0) return;
  CheckOk(encoder::cuda::CudaStatus(cudaMemcpyAsync(host, dev, n * sizeof(float),
                                                    cudaMemcpyDeviceToHost, stream),
                                    "cudaMemcpyAsync", __FILE__, __LINE__),
          "download");
}

template <typename Params>
class CudaDescribedTrainModel final : public ArchTrainModel<float> {
 public:
  using Hidden = int (*)(CudaTapeOps&, const Params&, int64_t);
  CudaDescribedTrainModel(const ParamLayout& layout, Params params, CudaTapeOps::Options options,
                          std::unique_ptr<CudaContext> ctx, Hidden hidden)
      : layout_(layout),
        params_(std::move(params)),
        options_(options),
        ctx_(std::move(ctx)),
        hidden_(hidden),
        gemm_(ctx_.get()) {}

  // NeoBERT's RoPE table (RopeTable<float>'s values, so both passes rotate
  // by the same angles).
  absl::Status UploadRope(const RopeTable<float>& rope) {
    const int64_t n = static_cast<int64_t>(rope.cos.size());
    HostToDevice(&rope_cos_, rope.cos.data(), n, ctx_->stream());
    HostToDevice(&rope_sin_, rope.sin.data(), n, ctx_->stream());
    options_.rope_cos = rope_cos_.as<float>();
    options_.rope_sin = rope_sin_.as<float>();
    options_.rope_half = rope.half;
    options_.rope_positions = rope.max_positions;
    return ctx_->Synchronize();
  }

  void Forward(const float* params, const PackedBatch& batch, int64_t first_layer,
               const float* x_in, float* hidden, std::unique_ptr<ArchActivations>* arch_acts,
               int64_t boundary_layer, float* boundary_out) const override {
    CheckForwardArgs(layout_, batch, first_layer, x_in, boundary_layer, boundary_out);
    std::lock_guard<std::mutex> lock(mu_);
    CheckOk(ctx_->Activate(), "selecting the device");
    const cudaStream_t stream = ctx_->stream();
    UploadParams(params);
    CudaTape* tape = ReuseOrMakeActs<CudaTape>(arch_acts);
    const bool record = tape != nullptr;
    if (!record) tape = &scratch_;
    tape->params_serial = serial_;
    const int64_t rows = batch.total_tokens(), c = layout_.hidden_size();
    if (first_layer > 0) HostToDevice(&x_in_, x_in, rows * c, stream);
    if (boundary_out != nullptr) CheckOk(boundary_.Reserve(rows * c * sizeof(float)), "cudaMalloc");
    CheckOk(hidden_dev_.Reserve(rows * c * sizeof(float)), "cudaMalloc");
    CudaTapeOps op(Device(), params_dev_.as<float>(), batch, options_, tape, record, first_layer,
                   x_in_.as<float>(), boundary_layer,
                   boundary_out != nullptr ? boundary_.as<float>() : nullptr);
    op.Finish(hidden_(op, params_, first_layer), hidden_dev_.as<float>());
    DeviceToHost(hidden, hidden_dev_.as<float>(), rows * c, stream);
    if (boundary_out != nullptr) {
      DeviceToHost(boundary_out, boundary_.as<float>(), rows * c, stream);
    }
    CheckOk(ctx_->Synchronize(), "the forward pass");
  }

  void BackwardFromHidden(const float* params, const PackedBatch& batch,
                          const ArchActivations& acts, const float* d_hidden, int64_t grad_begin,
                          float* grads) const override {
    const CudaTape& tape = static_cast<const CudaTape&>(acts);
    const int64_t stop_layer = LowestTrainedLayer(layout_, grad_begin, tape.first_layer);
    std::lock_guard<std::mutex> lock(mu_);
    CheckOk(ctx_->Activate(), "selecting the device");
    const cudaStream_t stream = ctx_->stream();
    // The pass that made the tape read the last upload unless another came
    // between (the caller passes the same parameters to both).
    if (tape.params_serial != serial_) UploadParams(params);
    const int64_t rows = batch.total_tokens(), c = layout_.hidden_size();
    const int64_t n = layout_.total() - grad_begin;
    HostToDevice(&d_hidden_, d_hidden, rows * c, stream);
    CheckOk(grads_dev_.Reserve(static_cast<size_t>(n) * sizeof(float)), "cudaMalloc");
    if (n > 0) {
      CheckOk(encoder::cuda::CudaStatus(cudaMemsetAsync(grads_dev_.get(), 0, n * sizeof(float),
                                                        stream),
                                        "cudaMemsetAsync", __FILE__, __LINE__),
              "zeroing the gradients");
    }
    cuda::CudaTapeBackward(Device(), tape, params_dev_.as<float>(), d_hidden_.as<float>(),
                           grad_begin, stop_layer, grads_dev_.as<float>(), &grad_pool_);
    grads_host_.resize(static_cast<size_t>(n));
    DeviceToHost(grads_host_.data(), grads_dev_.as<float>(), n, stream);
    CheckOk(ctx_->Synchronize(), "the backward pass");
    for (int64_t i = 0; i < n; ++i) grads[i] += grads_host_[static_cast<size_t>(i)];
  }

 private:
  CudaTrainDevice Device() const { return {ctx_.get(), &gemm_}; }

  void UploadParams(const float* params) const {
    HostToDevice(&params_dev_, params, layout_.total(), ctx_->stream());
    ++serial_;
  }

  ParamLayout layout_;
  Params params_;
  CudaTapeOps::Options options_;
  std::unique_ptr<CudaContext> ctx_;
  DeviceBuffer rope_cos_, rope_sin_;
  Hidden hidden_;
  // The device state of one pass at a time, under mu_.
  mutable std::mutex mu_;
  mutable cuda::TrainGemm gemm_;
  mutable DeviceBuffer params_dev_, x_in_, boundary_, hidden_dev_, d_hidden_, grads_dev_;
  mutable std::vector<float> grads_host_;
  mutable CudaTape scratch_;  // no-grad passes' values
  mutable cuda::BufferPool grad_pool_;  // the backward passes' value gradients
  mutable uint64_t serial_ = 0;
};

}  // namespace

absl::StatusOr<std::shared_ptr<const ArchTrainModel<float>>> MakeCudaArchTrainModel(
    const ParamLayout& layout, int device_index) {
  const int64_t heads = layout.architecture() == Architecture::kNeoBert
                            ? layout.config().num_attention_heads
                            : layout.bert_config().num_attention_heads;
  if (heads <= 0 || layout.hidden_size() != 64 * heads) {
    return absl::UnimplementedError(absl::StrCat(
        "training on CUDA needs attention heads of width 64 (this model: hidden ",
        layout.hidden_size(), ", ", heads, " heads); train it with --device cpu"));
  }
  if (layout.max_length() > cuda::kMaxTrainSequence) {
    return absl::UnimplementedError(absl::StrCat("training on CUDA takes sequences up to ",
                                                 cuda::kMaxTrainSequence,
                                                 " tokens; this model's max_length is ",
                                                 layout.max_length()));
  }
  ASSIGN_OR_RETURN(std::unique_ptr<CudaContext> ctx, CudaContext::Create(device_index));
  CudaTapeOps::Options o;
  switch (layout.architecture()) {
    case Architecture::kNeoBert: {
      const NeoBertConfig& cfg = layout.config();
      o.eps = static_cast<float>(cfg.norm_eps);
      o.heads = cfg.num_attention_heads;
      o.head_dim = cfg.head_dim();
      auto model = std::make_shared<CudaDescribedTrainModel<models::NeoBertParams<TrainWeight>>>(
          layout, NeoBertTrainWeights(layout), o, std::move(ctx),
          &models::NeoBertHidden<CudaTapeOps>);
      RETURN_IF_ERROR(
          model->UploadRope(RopeTable<float>(cfg.max_length, cfg.head_dim(), cfg.rope_theta)));
      return model;
    }
    case Architecture::kBert: {
      const BertConfig& cfg = layout.bert_config();
      o.eps = static_cast<float>(cfg.layer_norm_eps);
      o.heads = cfg.num_attention_heads;
      o.head_dim = cfg.head_dim();
      return std::make_shared<CudaDescribedTrainModel<models::BertParams<TrainWeight>>>(
          layout, BertTrainWeights(layout), o, std::move(ctx), &models::BertHidden<CudaTapeOps>);
    }
  }
  return absl::InvalidArgumentError("unknown architecture");
}

}  // namespace neodb::encoder::train
