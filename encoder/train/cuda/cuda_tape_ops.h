#pragma once
// CudaTapeOps: the CUDA training op set (encoder/models/op_set.h), tape_ops.h's
// TapeOps<float> on the device. A description (models/neobert_layers.h,
// models/bert_layers.h) run over it runs each op's F32 training body
// (train_kernels.h, the GEMMs through TrainGemm) on device buffers and, in
// training mode, appends to a CudaTape what the op's backward reads and a
// step that back-propagates through it; CudaTapeBackward replays the steps in
// reverse. The design is TapeOps' line for line (values by index, "saved"
// flags, consumed values written in place, unread values recycled at each
// layer boundary), so the two can be read side by side and the same
// description gives both their backward.
//
// Errors: a CUDA or cuBLASLt failure inside a pass (out of device memory, a
// device fault) aborts the process with the error printed: the op set's ops
// and ArchTrainModel have no error path, a half-run tape is unusable, and a
// run resumes from its last checkpoint. What can fail up front (no device, no
// kernel image, no cuBLASLt) fails in MakeCudaArchTrainModel instead.
//
// Thread-safety: one pass at a time per CudaTrainDevice (its stream).

#include <cstdint>
#include <functional>
#include <vector>

#include "encoder/backend.h"
#include "encoder/cuda/cuda_context.h"
#include "encoder/cuda/device_buffer.h"
#include "encoder/train/cuda/train_gemm.h"
#include "encoder/train/tape_ops.h"
#include "encoder/train/train_model.h"

namespace neodb::encoder::train::cuda {

using encoder::cuda::CudaContext;
using encoder::cuda::DeviceBuffer;

// Prints `st` and aborts when it is not OK (see "Errors" above).
void CheckOk(const absl::Status& st, const char* what);

// The device a pass runs on: its context (stream, cuBLASLt) and GEMM plans.
struct CudaTrainDevice {
  CudaContext* ctx = nullptr;
  TrainGemm* gemm = nullptr;
};

// Device buffers recycled between values (cudaMalloc is slow and
// synchronises): Take returns the pooled buffer that fits `bytes` with the
// least to spare, else grows the largest, else allocates.
class BufferPool {
 public:
  DeviceBuffer Take(size_t bytes);
  void Give(DeviceBuffer buffer);

 private:
  std::vector<DeviceBuffer> free_;
};

// The batch on the device: ids, offsets, each row's position and the rows
// grouped by id (EmbeddingRowsById) for the embedding backward.
struct DeviceBatch {
  int64_t rows = 0, batch = 0, max_len = 0, n_unique = 0;
  DeviceBuffer ids, offsets, positions, unique_ids, row_begin, token_rows;
  void Upload(const PackedBatch& batch, cudaStream_t stream);
};

// What a training-mode forward pass keeps for its backward pass.
struct CudaTape final : ArchActivations {
  struct Step {
    int out = -1;           // the value the op wrote
    bool in_place = false;  // out was also its input (its gradient lives on)
    std::function<void(class CudaTapeGrads&)> backward;
  };
  int64_t first_layer = 0;
  std::vector<DeviceBuffer> values;  // by index; empty once its storage is recycled
  std::vector<int64_t> cols;         // of each value
  std::vector<char> saved;           // a step reads the value again
  std::vector<Step> steps;
  std::vector<size_t> layer_steps;   // as Tape's
  int hidden = -1;                   // the description's result
  DeviceBatch batch;
  BufferPool pool;
  uint64_t params_serial = 0;  // the upload of the parameters this pass read
};

// The gradients a backward pass accumulates (device): of values, and (ADDED
// into `grads`) of the parameters at flat offset >= grad_begin. The values'
// gradients live in buffers of `pool`, given back when this goes.
class CudaTapeGrads {
 public:
  CudaTapeGrads(CudaTrainDevice dev, const CudaTape& tape, const float* params,
                int64_t grad_begin, float* grads, BufferPool* pool);
  ~CudaTapeGrads();
  CudaTrainDevice dev() const { return dev_; }
  cudaStream_t stream() const { return dev_.ctx->stream(); }
  int64_t rows() const { return tape_.batch.rows; }
  const CudaTape& tape() const { return tape_; }
  const DeviceBatch& batch() const { return tape_.batch; }
  const float* V(int v) const { return tape_.values[static_cast<size_t>(v)].as<float>(); }
  const float* P(const TrainWeight& w, int part = 0) const { return params_ + w.offset[part]; }
  float* DP(const TrainWeight& w, int part = 0) const;
  float* D(int v);
  float* Fresh(int v);
  void Release(int v);
  // Scratch of n floats that lives until the next Scratch call.
  float* Scratch(int64_t n);

 private:
  float* Take(int v);

  CudaTrainDevice dev_;
  const CudaTape& tape_;
  const float* params_;
  int64_t grad_begin_;
  float* grads_;
  std::vector<DeviceBuffer> d_;
  std::vector<char> live_;
  BufferPool* pool_;
  DeviceBuffer scratch_;
};

class CudaTapeOps {
 public:
  using Value = int;
  using Heads = int;  // q, k, v head-interleaved in one [rows, 3C] value
  using Weight = TrainWeight;
  struct Options {
    float eps = 0;  // of RmsNorm / LayerNorm
    int64_t heads = 0, head_dim = 0;
    // QkvRope's table (NeoBERT; device, RopeTable<float>'s cos and sin).
    const float* rope_cos = nullptr;
    const float* rope_sin = nullptr;
    int64_t rope_half = 0, rope_positions = 0;
  };

  // `params`, x_in and boundary_out are device pointers. `tape` receives the
  // values and (record) the steps; in no-grad mode (record false) it is
  // scratch whose values are recycled per layer. x_in: Input's value;
  // boundary_out (may be null) receives the state entering boundary_layer.
  CudaTapeOps(CudaTrainDevice dev, const float* params, const PackedBatch& batch, Options options,
              CudaTape* tape, bool record, int64_t first_layer, const float* x_in,
              int64_t boundary_layer, float* boundary_out);

  Value Input(int slot);
  Value Embedding(const Weight& table, int slot);
  Value AddPositions(Value x, const Weight& positions, const Weight& type);
  Value RmsNorm(Value x, const Weight& w, int slot);
  Value LayerNorm(Value x, const Weight* bias, const Weight& w, const Weight& b, int slot);
  Value Linear(Value x, const Weight& w, int slot);
  Value AddLinear(Value x, Value in, const Weight& w);
  Heads QkvRope(Value y, int slot);
  Heads SplitQkv(Value y, const Weight& bias, int slot);
  Value Attention(Heads heads, int slot);
  Value SwiGlu(Value u, int slot);
  Value BiasGelu(Value u, const Weight& bias);
  Value EnterLayer(int64_t l, Value x);

  // Copies the description's result v into out (device) [rows, cols(v)]; the
  // tape's hidden.
  void Finish(Value v, float* out);

 private:
  int New(int64_t cols);
  float* M(int v) { return t_->values[static_cast<size_t>(v)].as<float>(); }
  const float* V(int v) const { return t_->values[static_cast<size_t>(v)].as<float>(); }
  const float* P(const Weight& w, int part = 0) const { return params_ + w.offset[part]; }
  int64_t cols(int v) const { return t_->cols[static_cast<size_t>(v)]; }
  void Save(int v) { t_->saved[static_cast<size_t>(v)] = 1; }
  void Consume(int v) const;
  void Record(int out, bool in_place, std::function<void(CudaTapeGrads&)> backward);
  cudaStream_t stream() const { return dev_.ctx->stream(); }

  CudaTrainDevice dev_;
  const float* params_;
  Options o_;
  CudaTape* t_;
  bool record_;
  int64_t rows_;
  const float* x_in_;
  int64_t boundary_layer_;
  float* boundary_out_;
  std::vector<int> made_;  // values made since the last layer boundary
};

// Back-propagates d_hidden [rows, C] (device; the gradient of tape.hidden)
// through the steps of layers [stop_layer, L) and what follows them, and
// through the embeddings too when grad_begin == 0; ADDS each parameter's
// gradient at flat offset >= grad_begin into grads[offset − grad_begin]
// (device). The values' gradients take their buffers from `pool` and give
// them back (a pool kept between passes allocates nothing in steady state).
void CudaTapeBackward(CudaTrainDevice dev, const CudaTape& tape, const float* params,
                      const float* d_hidden, int64_t grad_begin, int64_t stop_layer,
                      float* grads, BufferPool* pool);

}  // namespace neodb::encoder::train::cuda
