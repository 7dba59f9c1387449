#pragma once
// Backend: one device's implementation of the NeoBERT forward pass over a
// packed batch. The CPU backend (OpenBLAS) and the CUDA backend implement it;
// Encoder (encoder.h) picks one and does tokenising, chunking and pooling
// bookkeeping around it.

#include <cstdint>
#include <memory>
#include <string_view>
#include <vector>

#include "common/status_macros.h"
#include "encoder/checkpoint/weights.h"
#include "encoder/core/tensor.h"

namespace neodb::encoder {

enum class Pooling : uint8_t { kCls, kMean };

// What the CPU backend's projection and FFN matmuls compute in. Embeddings,
// RMSNorm, RoPE, the attention (scores, softmax, P·V), pooling and the
// residual stream stay F32 in every precision.
//   kF32:  F32 weights and activations (SGEMM).
//   kBf16: BF16 weights and activations, F32 accumulation and output.
//   kInt8: S8 weights with one scale per output channel; activations
//          quantised per token to U8 (scale and zero point from the row's
//          range) right before each matmul; S32 accumulation, F32 output.
// Reduced precisions change the vectors slightly (a collection must record
// which one embedded it).
enum class Precision : uint8_t { kF32, kBf16, kInt8 };
std::string_view PrecisionName(Precision p);  // "f32", "bf16", "int8"
// Parses "f32", "bf16" or "int8"; INVALID_ARGUMENT naming the bad value.
absl::StatusOr<Precision> ParsePrecision(std::string_view name);

// Sequences laid end to end with no padding. Sequence b is
// ids[offsets[b], offsets[b+1]); positions restart at 0 for every sequence.
struct PackedBatch {
  std::vector<int32_t> ids;
  std::vector<int64_t> offsets{0};  // size = batch + 1, offsets[0] == 0

  int64_t batch_size() const { return static_cast<int64_t>(offsets.size()) - 1; }
  int64_t total_tokens() const { return offsets.back(); }
  int64_t length(int64_t b) const { return offsets[b + 1] - offsets[b]; }
  // The longest sequence's length (0 for an empty batch).
  int64_t longest() const;
  void Add(const std::vector<int32_t>& seq);
};

class Backend {
 public:
  virtual ~Backend() = default;
  // last_hidden_state (the model's output): CPU F32 [total_tokens, C].
  // INVALID_ARGUMENT for an id outside the vocabulary or a length outside
  // [1, max_length] (ValidatePackedBatch).
  virtual absl::StatusOr<Tensor> HiddenStates(const PackedBatch& batch) = 0;
  // Pooled vectors, not normalised: CPU F32 [batch, C]. Mean pooling averages
  // every token of a sequence ([CLS] and [SEP] included). Default:
  // HiddenStates, then ops::Pool on the CPU.
  virtual absl::StatusOr<Tensor> Pool(const PackedBatch& batch, Pooling pooling);
  virtual Device device() const = 0;
};

// The checks every backend makes of a packed batch before a forward pass:
// offsets that match the ids, every sequence 1..max_length tokens, every id
// in [0, vocab_size). INVALID_ARGUMENT naming the sequence or position;
// `length_name` names the limit in the message ("max_length").
absl::Status ValidatePackedBatch(const PackedBatch& batch, int64_t max_length, int64_t vocab_size,
                                 std::string_view length_name);

struct BackendOptions {
  Device device = Device::kCpu;
  int device_index = 0;
  int num_threads = 1;         // CPU: OpenBLAS and op threads
  DType compute_dtype = DType::kF32;  // CUDA: BF16 (default there), F16 or F32
  // CPU: precision of the projection and FFN matmuls (see Precision). A CPU
  // without the instructions runs F32 and Encoder::precision_note() says
  // why. Ignored by the CUDA backend (compute_dtype). Default: kF32.
  Precision precision = Precision::kF32;
};

// The CPU backend over `weights` (which it keeps alive).
// `precision` must be one the host runs (CpuPrecisionFor in
// ops/cpu_kernels.h; CHECKed); BF16/INT8 weights are converted here, once.
std::unique_ptr<Backend> MakeCpuBackend(std::shared_ptr<const NeoBertWeights> weights,
                                        int num_threads, Precision precision = Precision::kF32);

}  // namespace neodb::encoder
