#include "encoder/cuda/cuda_weights.h"

#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "encoder/cuda/cuda_check.h"

namespace neodb::encoder::cuda {
namespace {

absl::Status CheckShape(const Tensor& t, const Shape& want, const std::string& name) {
  if (!t.defined() || t.shape() != want) {
    return absl::InvalidArgumentError(absl::StrCat("weight ", name, " has shape [",
                                                   absl::StrJoin(t.shape(), ", "), "], expected [",
                                                   absl::StrJoin(want, ", "), "]"));
  }
  if (t.device() != Device::kCpu) {
    return absl::InvalidArgumentError(absl::StrCat("weight ", name, " is not in CPU memory"));
  }
  return absl::OkStatus();
}

// Converts `t` to `dtype` on the host and copies it into a new device buffer.
absl::StatusOr<DeviceBuffer> UploadAs(const Tensor& t, DType dtype, size_t* bytes) {
  const Tensor f32 = t.ToF32();
  const float* src = f32.data<float>();
  const int64_t n = f32.numel();
  ASSIGN_OR_RETURN(DeviceBuffer buf, DeviceBuffer::Allocate(n * SizeOf(dtype)));
  if (dtype == DType::kF32) {
    CUDA_RETURN_IF_ERROR(cudaMemcpy(buf.get(), src, n * sizeof(float), cudaMemcpyHostToDevice));
  } else {
    std::vector<uint16_t> staged(n);
    if (dtype == DType::kBF16) {
      for (int64_t i = 0; i < n; ++i) staged[i] = F32ToBF16(src[i]);
    } else {
      for (int64_t i = 0; i < n; ++i) staged[i] = F32ToF16(src[i]);
    }
    CUDA_RETURN_IF_ERROR(
        cudaMemcpy(buf.get(), staged.data(), n * sizeof(uint16_t), cudaMemcpyHostToDevice));
  }
  *bytes += buf.size();
  return buf;
}

}  // namespace

absl::StatusOr<CudaWeights> CudaWeights::Upload(const NeoBertWeights& w, DType dtype) {
  if (dtype != DType::kF32 && dtype != DType::kF16 && dtype != DType::kBF16) {
    return absl::InvalidArgumentError(absl::StrCat(
        "CUDA compute dtype must be F32, F16 or BF16, got ", std::string(DTypeName(dtype))));
  }
  const NeoBertConfig& cfg = w.config;
  if (cfg.hidden_size <= 0 || cfg.num_attention_heads <= 0 ||
      cfg.hidden_size % cfg.num_attention_heads != 0) {
    return absl::InvalidArgumentError(
        "config: hidden_size must be a positive multiple of "
        "num_attention_heads");
  }
  CudaWeights out;
  out.dtype = dtype;
  out.hidden = cfg.hidden_size;
  out.heads = cfg.num_attention_heads;
  out.head_dim = cfg.head_dim();
  out.vocab = cfg.vocab_size;
  out.max_length = cfg.max_length;
  out.eps = static_cast<float>(cfg.norm_eps);
  out.theta = static_cast<float>(cfg.rope_theta);
  if (out.head_dim != 64) {
    return absl::UnimplementedError(absl::StrCat(
        "the CUDA attention kernel supports head_dim 64 only, this model has ", out.head_dim));
  }
  if (static_cast<int64_t>(w.layers.size()) != cfg.num_hidden_layers) {
    return absl::InvalidArgumentError(absl::StrCat("weights have ", w.layers.size(),
                                                   " layers, config says ", cfg.num_hidden_layers));
  }
  if (w.layers.empty() || w.layers[0].w12.rank() != 2 || w.layers[0].w12.dim(0) % 2 != 0) {
    return absl::InvalidArgumentError("weights: layer 0 ffn.w12 must be [2F, C]");
  }
  // F from the tensor itself (config.ffn_dim() computes the same number).
  out.ffn = w.layers[0].w12.dim(0) / 2;
  const int64_t c = out.hidden, f = out.ffn;

  RETURN_IF_ERROR(CheckShape(w.embeddings, {out.vocab, c}, "encoder.weight"));
  RETURN_IF_ERROR(CheckShape(w.final_norm, {c}, "layer_norm.weight"));
  ASSIGN_OR_RETURN(out.embeddings, UploadAs(w.embeddings, DType::kF32, &out.bytes));
  ASSIGN_OR_RETURN(out.final_norm, UploadAs(w.final_norm, DType::kF32, &out.bytes));
  out.layers.reserve(w.layers.size());
  for (size_t i = 0; i < w.layers.size(); ++i) {
    const LayerWeights& l = w.layers[i];
    const std::string p = absl::StrCat("transformer_encoder.", i, ".");
    RETURN_IF_ERROR(CheckShape(l.attention_norm, {c}, p + "attention_norm.weight"));
    RETURN_IF_ERROR(CheckShape(l.qkv, {3 * c, c}, p + "qkv.weight"));
    RETURN_IF_ERROR(CheckShape(l.wo, {c, c}, p + "wo.weight"));
    RETURN_IF_ERROR(CheckShape(l.ffn_norm, {c}, p + "ffn_norm.weight"));
    RETURN_IF_ERROR(CheckShape(l.w12, {2 * f, c}, p + "ffn.w12.weight"));
    RETURN_IF_ERROR(CheckShape(l.w3, {c, f}, p + "ffn.w3.weight"));
    CudaLayerWeights d;
    ASSIGN_OR_RETURN(d.attention_norm, UploadAs(l.attention_norm, DType::kF32, &out.bytes));
    ASSIGN_OR_RETURN(d.qkv, UploadAs(l.qkv, dtype, &out.bytes));
    ASSIGN_OR_RETURN(d.wo, UploadAs(l.wo, dtype, &out.bytes));
    ASSIGN_OR_RETURN(d.ffn_norm, UploadAs(l.ffn_norm, DType::kF32, &out.bytes));
    ASSIGN_OR_RETURN(d.w12, UploadAs(l.w12, dtype, &out.bytes));
    ASSIGN_OR_RETURN(d.w3, UploadAs(l.w3, dtype, &out.bytes));
    out.layers.push_back(std::move(d));
  }
  return out;
}

}  // namespace neodb::encoder::cuda
