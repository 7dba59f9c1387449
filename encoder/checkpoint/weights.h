#pragma once
// NeoBertWeights: every tensor of a NeoBERT checkpoint, found by name, checked
// against the config, and the functions that load and save a checkpoint
// directory in the Hugging Face layout (config.json, model.safetensors,
// tokenizer files). NEOBERT.md §2 lists the names and shapes.

#include <optional>
#include <string>
#include <vector>

#include "common/status_macros.h"
#include "encoder/checkpoint/config.h"
#include "encoder/core/tensor.h"

namespace neodb::encoder {

struct LayerWeights {
  Tensor attention_norm;  // [C]
  Tensor qkv;             // [3C, C], head-interleaved rows as stored (NEOBERT.md §3)
  Tensor wo;              // [C, C]
  Tensor ffn_norm;        // [C]
  Tensor w12;             // [2F, C]: rows [0, F) gate, [F, 2F) linear
  Tensor w3;              // [C, F]
};

struct NeoBertWeights {
  NeoBertConfig config;
  Tensor embeddings;  // [V, C]
  std::vector<LayerWeights> layers;
  Tensor final_norm;  // [C]
  // The MLM head; absent in bare-encoder checkpoints.
  std::optional<Tensor> decoder_weight;  // [V, C]
  std::optional<Tensor> decoder_bias;    // [V]
  // A fingerprint of the weights and config ("nb-" + 16 hex digits): two
  // checkpoints get the same id only when they compute the same function.
  std::string model_id;
};

struct LoadOptions {
  // Keep the MLM head (needed by pre-training and MLM evaluation).
  bool load_decoder = false;
};

// The weights file of checkpoint directory `dir`: "<dir>/model.safetensors",
// or "<dir>/model.safetensors.zst" (zstd-compressed, see safetensors.h) when
// only that exists. When neither exists, the uncompressed name, so that the
// error opening it names the usual file. INVALID_ARGUMENT when both exist:
// which one holds the intended weights is ambiguous.
absl::StatusOr<std::string> WeightsFilePath(const std::string& dir);

// Loads <dir>/config.json and the weights file (WeightsFilePath). Tensors
// are accepted with or without the "model." prefix, in F32, F16 or BF16; all
// come back as CPU F32 (F32 data is mmap'd, not copied; from a .zst it lives
// in the decompressed memory). Every name, shape, dtype and offset is
// validated; a bad file is an error that names the problem.
absl::StatusOr<NeoBertWeights> LoadCheckpoint(const std::string& dir,
                                              const LoadOptions& options = {});

struct SaveOptions {
  DType dtype = DType::kF32;  // storage type of the tensors: F32, F16 or BF16
};

// Writes config.json and model.safetensors (with the "model." prefix and,
// when present, decoder.*) into `dir`, which must exist. Writes to temporary
// names and renames, so a crash never leaves a half-written checkpoint.
// Tokenizer files are the caller's (Tokenizer::SaveTo).
absl::Status SaveCheckpoint(const NeoBertWeights& weights, const std::string& dir,
                            const SaveOptions& options = {});

// Randomly initialised weights (NEOBERT.md §6: uniform ±0.02, norms at 1),
// deterministic for a seed on every machine (no std:: distributions).
// Per tensor, the values come from a splitmix64 stream seeded by
// XXH3_64(name, seed) (name without the "model." prefix), so they do not
// depend on the order tensors are filled in. model_id is set.
NeoBertWeights RandomWeights(const NeoBertConfig& config, uint64_t seed,
                             bool with_decoder = true);

// model_id: "nb-" + 16 lower-case hex digits of XXH3_64 over, in order,
//   1. config.ToJson("float32") (canonical: sorted keys, torch_dtype fixed so
//      the storage type does not enter the id — the F32 values do);
//   2. for each encoder tensor in the order encoder.weight, then for layer
//      i = 0.. L−1: attention_norm, qkv, wo, ffn_norm, ffn.w12, ffn.w3, then
//      layer_norm.weight: its unprefixed name and a NUL byte, its shape as
//      little-endian int64s, its values as little-endian F32 bytes.
// The MLM head does not enter the id (it does not change the embeddings).
// REQUIRES: shapes match the config (CheckWeights).
std::string ComputeModelId(const NeoBertWeights& weights);

// Checks every tensor's presence, shape, dtype (F32) and device (CPU)
// against weights.config; an error names the tensor.
absl::Status CheckWeights(const NeoBertWeights& weights);

// Number of parameters: the encoder's, plus the MLM head's when present.
int64_t ParameterCount(const NeoBertWeights& weights);

// The tensor names of an encoder with `num_layers` layers, unprefixed, in
// model_id order (see ComputeModelId).
std::vector<std::string> EncoderTensorNames(int64_t num_layers);

}  // namespace neodb::encoder
