#pragma once
// The CUDA bodies of training (encoder/train/cuda/*_gpu.cu): each op's
// forward as training needs it (keeping what its backward reads: RMSNorm's
// and LayerNorm's row statistics, attention's row log-sum-exp) and its
// backward, in F32, as pointer + stream launchers over device memory. Each
// computes what the CPU body of the same name in encoder/train/*.h computes
// (tape_ops.cc runs those), on the same layouts, so the CUDA training op set
// (cuda_tape_ops.h) is tape_ops.cc with these calls in place of the CPU's.
//
// Conventions: matrices are row-major [rows, cols]; "ADDS" means the launcher
// accumulates into its output (gradients of values or parameters), else it
// overwrites. Parameter gradients are reduced without atomics (one thread
// owns each output element and walks the rows in order), so a step's
// gradients are the same from run to run. No launcher allocates or
// synchronises; each returns the launch status (cudaGetLastError).
//
// Packed batches: `offsets` (device, batch + 1 entries, offsets[0] = 0) as
// PackedBatch's; `positions` (device, one per row) each token's position in
// its sequence.
//
// F32 only, for this first slice: master weights, activations and gradients
// are all F32 (the README says what BF16 would change).

#include <cuda_runtime.h>

#include <cstdint>

namespace neodb::encoder::train::cuda {

// ---- norms (norm_grad_gpu.cu) ----

// y = x / rms(x) ⊙ w per row; rstd[r] = 1 / rms(x[r]) (rstd may be null).
cudaError_t LaunchRmsNormForward(const float* x, const float* w, int64_t rows, int64_t cols,
                                 float eps, float* y, float* rstd, cudaStream_t stream);
// dx ADDS r·(dy⊙w) − x·r³·Σ(dy⊙w⊙x)/n; dw ADDS Σ_rows dy⊙x·r. dx or dw may
// be null.
cudaError_t LaunchRmsNormBackward(const float* x, const float* w, const float* rstd,
                                  const float* dy, int64_t rows, int64_t cols, float* dx,
                                  float* dw, cudaStream_t stream);
// y = (x − mean)·rstd ⊙ w + b per row; mean, rstd per row (may be null).
cudaError_t LaunchLayerNormForward(const float* x, const float* w, const float* b, int64_t rows,
                                   int64_t cols, float eps, float* y, float* mean, float* rstd,
                                   cudaStream_t stream);
// dx ADDS rstd·(g − mean(g) − x̂·mean(g⊙x̂)), g = dy⊙w; dw ADDS Σ dy⊙x̂; db
// ADDS Σ dy. Any of dx, dw, db may be null.
cudaError_t LaunchLayerNormBackward(const float* x, const float* w, const float* mean,
                                    const float* rstd, const float* dy, int64_t rows,
                                    int64_t cols, float* dx, float* dw, float* db,
                                    cudaStream_t stream);

// ---- attention (attention_grad_gpu.cu) ----
// The longest sequence the attention kernels take (a row of scores lives in
// shared memory).
constexpr int64_t kMaxTrainSequence = 11 * 1024;
// qkv [rows, 3·H·D] head-interleaved (head h: q, k, v at 3Dh, 3Dh + D,
// 3Dh + 2D), o [rows, H·D], lse [rows, H]; softmax(q·kᵀ/√D) per sequence and
// head; rows = offsets[batch]. REQUIRES: head_dim == 64; every sequence
// length <= max_len <= kMaxTrainSequence (cudaErrorInvalidValue otherwise).

// o and lse (the row log-sum-exp of the scaled scores; may be null).
cudaError_t LaunchAttentionForward(const float* qkv, const int64_t* offsets, int64_t batch,
                                   int64_t rows, int64_t max_len, int64_t heads,
                                   int64_t head_dim, float* o, float* lse, cudaStream_t stream);
// dqkv (overwritten, every element) from d_o: the softmax is recomputed in
// F32 from q, k and lse. `delta` is scratch of [rows, H] floats.
cudaError_t LaunchAttentionBackward(const float* qkv, const float* o, const float* lse,
                                    const float* d_o, const int64_t* offsets, int64_t batch,
                                    int64_t rows, int64_t max_len, int64_t heads, int64_t head_dim,
                                    float* delta, float* dqkv, cudaStream_t stream);

// ---- pointwise and layout ops (pointwise_grad_gpu.cu) ----

// y[i] += x[i] for i < n.
cudaError_t LaunchAddInto(const float* x, int64_t n, float* y, cudaStream_t stream);
// y[r, col0 + c] += b[c] for c < cols (y's row stride ld).
cudaError_t LaunchAddBias(const float* b, int64_t rows, int64_t cols, int64_t ld, int64_t col0,
                          float* y, cudaStream_t stream);
// db[c] ADDS Σ_r dy[r, col0 + c] (dy's row stride ld).
cudaError_t LaunchBiasBackward(const float* dy, int64_t rows, int64_t cols, int64_t ld,
                               int64_t col0, float* db, cudaStream_t stream);
// Rotates in place, per row r, `heads` pairs-vectors of length 2·half at
// columns col0 + h·head_stride by the angle of positions[r] (cos, sin
// [max_positions, half] as RopeTable<float>'s); inverse rotates backwards.
cudaError_t LaunchRope(float* data, int64_t rows, int64_t ld, const int32_t* positions,
                       int64_t heads, int64_t col0, int64_t head_stride, const float* cos,
                       const float* sin, int64_t half, bool inverse, cudaStream_t stream);
// q | k | v column blocks [rows, 3·H·D] → head-interleaved (writes `to`);
// the gradient direction ADDS into the blocks.
cudaError_t LaunchInterleaveQkv(const float* blocks, int64_t rows, int64_t heads, int64_t d,
                                float* interleaved, cudaStream_t stream);
cudaError_t LaunchAddDeinterleavedQkv(const float* interleaved, int64_t rows, int64_t heads,
                                      int64_t d, float* blocks, cudaStream_t stream);
// s = SiLU(u[:, :F]) ⊙ u[:, F:]; du (overwritten) from ds.
cudaError_t LaunchSwiGluForward(const float* u, int64_t rows, int64_t f, float* s,
                                cudaStream_t stream);
cudaError_t LaunchSwiGluBackward(const float* u, const float* ds, int64_t rows, int64_t f,
                                 float* du, cudaStream_t stream);
// g = GELU(u) (erf form); du (overwritten) from dg.
cudaError_t LaunchGeluForward(const float* u, int64_t n, float* g, cudaStream_t stream);
cudaError_t LaunchGeluBackward(const float* u, const float* dg, int64_t n, float* du,
                               cudaStream_t stream);
// x[r] = table[ids[r]] (rows of dim).
cudaError_t LaunchEmbeddingForward(const int32_t* ids, int64_t rows, const float* table,
                                   int64_t dim, float* x, cudaStream_t stream);
// The embedding's backward without atomics: the batch's distinct ids
// `unique_ids` [n_unique], and for the i-th the rows that hold it,
// token_rows[row_begin[i], row_begin[i + 1]) in increasing order (host-built:
// EmbeddingRowsById). d_table[id] ADDS the sum of dx over its rows.
cudaError_t LaunchEmbeddingBackward(const int32_t* unique_ids, const int32_t* row_begin,
                                    const int32_t* token_rows, int64_t n_unique, const float* dx,
                                    int64_t dim, float* d_table, cudaStream_t stream);
// x[t] += table[positions[t]].
cudaError_t LaunchPositionEmbeddingForward(const float* table, const int32_t* positions,
                                           int64_t rows, int64_t dim, float* x,
                                           cudaStream_t stream);
// d_table[p] ADDS Σ over sequences b longer than p of dx[offsets[b] + p],
// for p < max_len.
cudaError_t LaunchPositionEmbeddingBackward(const float* dx, const int64_t* offsets,
                                            int64_t batch, int64_t max_len, int64_t dim,
                                            float* d_table, cudaStream_t stream);

// ---- the optimiser (pointwise_grad_gpu.cu) ----

// One AdamW update of n entries, the float math of train::AdamW::Step:
// m = b1·m + (1 − b1)·g; v = b2·v + (1 − b2)·g²; p *= decay where
// decay_mask[i]; p −= step_size·m / (√v·inv_sqrt_bc2 + eps). Entries with
// frozen[i] (frozen may be null) stay as they are, m and v included.
struct AdamWStepArgs {
  float b1 = 0.9f, b2 = 0.95f, eps = 1e-8f;
  float step_size = 0;     // lr / (1 − b1^step)
  float inv_sqrt_bc2 = 0;  // 1 / √(1 − b2^step)
  float decay = 1;         // 1 − lr · weight_decay
};
cudaError_t LaunchAdamWStep(float* params, const float* grads, float* m, float* v,
                            const uint8_t* decay_mask, const uint8_t* frozen, int64_t n,
                            const AdamWStepArgs& args, cudaStream_t stream);

}  // namespace neodb::encoder::train::cuda
