#pragma once
// Test and bench support for the CUDA backend (not part of the encoder
// library): deterministic random full-size NeoBERT weights and a minimal
// writer of config.json + model.safetensors (F32) that the PyTorch baseline
// (bench/torch_baseline.py) reads, so both sides run the same weights.
//
// When the checkpoint room's RandomWeights/SaveCheckpoint are in main these
// can be replaced by them; the generator here is self-contained so that the
// GPU tests and the bench do not wait on that.

#include <cstdint>
#include <string>

#include "common/status_macros.h"
#include "encoder/checkpoint/weights.h"

namespace neodb::encoder::testing {

// FFN width F = round_up_to_multiple_of_8(int(2 · intermediate_size / 3)).
int64_t FfnDim(const NeoBertConfig& config);

// Weights uniform in ±scale (default: the paper's init, ±0.02), norm weights
// uniform in 1 ± norm_jitter (so that a kernel ignoring them is caught).
// Deterministic for a seed on every machine. No decoder.
NeoBertWeights MakeRandomWeights(const NeoBertConfig& config, uint64_t seed, float scale = 0.02f,
                                 float norm_jitter = 0.1f);

// Fills `n` floats uniform in [lo, hi) from `seed` (splitmix64).
void FillUniform(float* out, int64_t n, uint64_t seed, float lo, float hi);

// Writes <dir>/config.json and <dir>/model.safetensors (F32, "model."
// prefixed names as the released checkpoint). `dir` must exist.
absl::Status WriteCheckpoint(const NeoBertWeights& weights, const std::string& dir);

}  // namespace neodb::encoder::testing
