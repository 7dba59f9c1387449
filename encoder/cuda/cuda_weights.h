#pragma once
// CudaWeights: a NeoBERT checkpoint uploaded to one GPU, once. GEMM weights
// are stored in the compute type (BF16 by default, F16 or F32); the token
// embeddings and the norm weights stay F32 (they feed the F32 residual stream
// and the F32 norms). The fused QKV weight keeps its head-interleaved row
// order: the QKV+RoPE kernel reads it that way.

#include <cstdint>
#include <vector>

#include "common/status_macros.h"
#include "encoder/checkpoint/weights.h"
#include "encoder/cuda/device_buffer.h"

namespace neodb::encoder::cuda {

struct CudaLayerWeights {
  DeviceBuffer attention_norm;  // F32 [C]
  DeviceBuffer qkv;             // compute [3C, C]
  DeviceBuffer wo;              // compute [C, C]
  DeviceBuffer ffn_norm;        // F32 [C]
  DeviceBuffer w12;             // compute [2F, C]
  DeviceBuffer w3;              // compute [C, F]
};

struct CudaWeights {
  DType dtype = DType::kBF16;  // compute type of the GEMM weights
  int64_t hidden = 0;          // C
  int64_t heads = 0;           // H
  int64_t head_dim = 0;        // D (64)
  int64_t ffn = 0;             // F
  int64_t vocab = 0;           // V
  int64_t max_length = 0;
  float eps = 0.f;
  float theta = 0.f;
  DeviceBuffer embeddings;  // F32 [V, C]
  std::vector<CudaLayerWeights> layers;
  DeviceBuffer final_norm;  // F32 [C]
  size_t bytes = 0;         // device memory held

  // Checks every tensor's shape against the config (INVALID_ARGUMENT naming
  // the tensor), converts on the host and copies to the current device.
  // UNIMPLEMENTED when head_dim != 64 (the attention kernel's tile).
  static absl::StatusOr<CudaWeights> Upload(const NeoBertWeights& weights, DType dtype);
};

}  // namespace neodb::encoder::cuda
