#include "encoder/cuda/cuda_neobert.h"

#include <algorithm>
#include <cmath>

#include "absl/strings/str_cat.h"
#include "encoder/cuda/cuda_check.h"
#include "encoder/cuda/kernels.h"

namespace neodb::encoder::cuda {

CudaNeoBert::CudaNeoBert(const CudaContext* ctx, const CudaWeights* weights)
    : ctx_(ctx), w_(weights), gemm_(ctx) {}

absl::Status CudaNeoBert::Validate(const PackedBatch& batch) const {
  const auto& off = batch.offsets;
  if (off.empty() || off[0] != 0) {
    return absl::InvalidArgumentError("packed batch: offsets must start with 0");
  }
  const int64_t b_count = batch.batch_size();
  if (b_count > 65535) {
    return absl::InvalidArgumentError(
        absl::StrCat("packed batch: ", b_count, " sequences, at most 65535 per pass"));
  }
  for (int64_t b = 0; b < b_count; ++b) {
    const int64_t len = off[b + 1] - off[b];
    if (len < 1 || len > w_->max_length) {
      return absl::InvalidArgumentError(absl::StrCat("packed batch: sequence ", b, " has ", len,
                                                     " tokens, must be in [1, ", w_->max_length,
                                                     "]"));
    }
  }
  if (static_cast<int64_t>(batch.ids.size()) != off.back()) {
    return absl::InvalidArgumentError(
        absl::StrCat("packed batch: ", batch.ids.size(), " ids but offsets end at ", off.back()));
  }
  if (off.back() > (int64_t{1} << 30)) {
    return absl::InvalidArgumentError("packed batch: too many tokens for one pass");
  }
  for (size_t i = 0; i < batch.ids.size(); ++i) {
    if (batch.ids[i] < 0 || batch.ids[i] >= w_->vocab) {
      return absl::InvalidArgumentError(absl::StrCat("packed batch: token id ", batch.ids[i],
                                                     " at ", i, " outside vocabulary [0, ",
                                                     w_->vocab, ")"));
    }
  }
  return absl::OkStatus();
}

absl::Status CudaNeoBert::Reserve(int64_t t, int64_t b) {
  const size_t act = SizeOf(w_->dtype);
  const int64_t c = w_->hidden, f = w_->ffn;
  const int64_t chunk = chunk_tokens_ > 0 ? std::min(chunk_tokens_, t) : t;
  RETURN_IF_ERROR(ids_.Reserve(t * sizeof(int32_t)));
  RETURN_IF_ERROR(positions_.Reserve(t * sizeof(int32_t)));
  RETURN_IF_ERROR(cu_seqlens_.Reserve((b + 1) * sizeof(int32_t)));
  RETURN_IF_ERROR(residual_.Reserve(t * c * sizeof(float)));
  RETURN_IF_ERROR(normed_.Reserve(t * c * act));
  RETURN_IF_ERROR(qkv_.Reserve(chunk * 3 * c * act));
  RETURN_IF_ERROR(q_.Reserve(t * c * act));
  RETURN_IF_ERROR(k_.Reserve(t * c * act));
  RETURN_IF_ERROR(v_.Reserve(t * c * act));
  RETURN_IF_ERROR(attn_.Reserve(t * c * act));
  RETURN_IF_ERROR(ffn_in_.Reserve(chunk * 2 * f * act));
  RETURN_IF_ERROR(ffn_act_.Reserve(chunk * f * act));
  RETURN_IF_ERROR(final_.Reserve(t * c * sizeof(float)));
  RETURN_IF_ERROR(pooled_.Reserve(b * c * sizeof(float)));
  return absl::OkStatus();
}

absl::Status CudaNeoBert::PoisonForTesting(int64_t tokens, int64_t batch) {
  RETURN_IF_ERROR(Reserve(tokens, batch));
  for (DeviceBuffer* b : {&residual_, &normed_, &qkv_, &q_, &k_, &v_, &attn_, &ffn_in_, &ffn_act_,
                          &final_, &pooled_}) {
    CUDA_RETURN_IF_ERROR(cudaMemsetAsync(b->get(), 0xFF, b->size(), ctx_->stream()));
  }
  return ctx_->Synchronize();
}

absl::Status CudaNeoBert::Forward(const PackedBatch& batch) {
  const cudaStream_t s = ctx_->stream();
  tokens_ = batch.total_tokens();
  batch_ = batch.batch_size();
  RETURN_IF_ERROR(Reserve(tokens_, batch_));
  if (tokens_ == 0) return absl::OkStatus();

  // The batch description: positions restart at 0 for every sequence.
  h_positions_.resize(tokens_);
  h_cu_seqlens_.resize(batch_ + 1);
  max_len_ = 0;
  for (int64_t b = 0; b <= batch_; ++b) h_cu_seqlens_[b] = static_cast<int32_t>(batch.offsets[b]);
  for (int64_t b = 0; b < batch_; ++b) {
    const int64_t len = batch.length(b);
    max_len_ = std::max<int>(max_len_, static_cast<int>(len));
    for (int64_t p = 0; p < len; ++p) h_positions_[batch.offsets[b] + p] = static_cast<int32_t>(p);
  }
  CUDA_RETURN_IF_ERROR(cudaMemcpyAsync(ids_.get(), batch.ids.data(), tokens_ * sizeof(int32_t),
                                       cudaMemcpyHostToDevice, s));
  CUDA_RETURN_IF_ERROR(cudaMemcpyAsync(positions_.get(), h_positions_.data(),
                                       tokens_ * sizeof(int32_t), cudaMemcpyHostToDevice, s));
  CUDA_RETURN_IF_ERROR(cudaMemcpyAsync(cu_seqlens_.get(), h_cu_seqlens_.data(),
                                       (batch_ + 1) * sizeof(int32_t), cudaMemcpyHostToDevice, s));

  // 1. x = embedding rows of the ids (F32 residual stream).
  const int c = static_cast<int>(w_->hidden);
  CUDA_RETURN_IF_ERROR(LaunchEmbeddingGather(w_->embeddings.as<float>(), ids_.as<int32_t>(),
                                             tokens_, c, residual_.as<float>(), s));
  // 2. The transformer blocks.
  for (const CudaLayerWeights& layer : w_->layers) RETURN_IF_ERROR(Layer(layer));
  // 3. last_hidden_state = RMSNorm(x, layer_norm), kept in F32.
  CUDA_RETURN_IF_ERROR(LaunchRmsNorm(residual_.as<float>(), w_->final_norm.as<float>(), tokens_, c,
                                     w_->eps, final_.get(), DType::kF32, s));
  return absl::OkStatus();
}

absl::Status CudaNeoBert::Layer(const CudaLayerWeights& w) {
  const cudaStream_t s = ctx_->stream();
  const DType act = w_->dtype;
  const size_t act_size = SizeOf(act);
  const int64_t t = tokens_, c = w_->hidden, f = w_->ffn;
  const int heads = static_cast<int>(w_->heads);
  const int64_t chunk = chunk_tokens_ > 0 ? std::min(chunk_tokens_, t) : t;
  // Token slice [t0, t0 + n) of an activation buffer with `cols` columns.
  auto rows = [&](const DeviceBuffer& b, int64_t t0, int64_t cols) {
    return static_cast<char*>(b.get()) + t0 * cols * act_size;
  };
  float* residual = residual_.as<float>();
  // normed = RMSNorm(x, weight), in the activation type: the input of both blocks.
  auto rms_norm = [&](const DeviceBuffer& weight) {
    return LaunchRmsNorm(residual, weight.as<float>(), t, static_cast<int>(c), w_->eps,
                         normed_.get(), act, s);
  };

  // a = RMSNorm(x, attention_norm); y = a · qkvᵀ; per-head split of q, k, v
  // and RoPE on q and k (positions restart per sequence).
  CUDA_RETURN_IF_ERROR(rms_norm(w.attention_norm));
  for (int64_t t0 = 0; t0 < t; t0 += chunk) {
    const int64_t n = std::min(chunk, t - t0);
    RETURN_IF_ERROR(
        gemm_.Run(rows(normed_, t0, c), w.qkv.get(), qkv_.get(), n, 3 * c, c, act, act, 0.f));
    CUDA_RETURN_IF_ERROR(LaunchQkvRope(qkv_.get(), positions_.as<int32_t>() + t0, n, heads,
                                       w_->theta, rows(q_, t0, c), rows(k_, t0, c), rows(v_, t0, c),
                                       act, s));
  }
  // softmax(q·kᵀ / sqrt(D)) · v per sequence, heads concatenated.
  const float scale = 1.f / std::sqrt(static_cast<float>(w_->head_dim));
  CUDA_RETURN_IF_ERROR(LaunchAttention(
      q_.get(), k_.get(), v_.get(), cu_seqlens_.as<int32_t>(), static_cast<int>(batch_), max_len_,
      heads, static_cast<int>(w_->head_dim), scale, attn_.get(), act, s, attention_kernel_));
  // x += o · woᵀ (the residual add is the GEMM's beta = 1, in F32).
  RETURN_IF_ERROR(gemm_.Run(attn_.get(), w.wo.get(), residual, t, c, c, act, DType::kF32, 1.f));

  // f = RMSNorm(x, ffn_norm); u = f · w12ᵀ; x += (SiLU(u[:F]) ⊙ u[F:]) · w3ᵀ.
  CUDA_RETURN_IF_ERROR(rms_norm(w.ffn_norm));
  for (int64_t t0 = 0; t0 < t; t0 += chunk) {
    const int64_t n = std::min(chunk, t - t0);
    RETURN_IF_ERROR(
        gemm_.Run(rows(normed_, t0, c), w.w12.get(), ffn_in_.get(), n, 2 * f, c, act, act, 0.f));
    CUDA_RETURN_IF_ERROR(
        LaunchSwiGlu(ffn_in_.get(), n, static_cast<int>(f), ffn_act_.get(), act, s));
    RETURN_IF_ERROR(
        gemm_.Run(ffn_act_.get(), w.w3.get(), residual + t0 * c, n, c, f, act, DType::kF32, 1.f));
  }
  return absl::OkStatus();
}

absl::Status CudaNeoBert::Pool(Pooling pooling) {
  CUDA_RETURN_IF_ERROR(LaunchPool(final_.as<float>(), cu_seqlens_.as<int32_t>(),
                                  static_cast<int>(batch_), static_cast<int>(w_->hidden),
                                  pooling == Pooling::kMean, pooled_.as<float>(), ctx_->stream()));
  return absl::OkStatus();
}

}  // namespace neodb::encoder::cuda
