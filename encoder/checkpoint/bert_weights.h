#pragma once
// The BERT family (BERT, MiniLM, BGE, E5, GTE: Hugging Face model_type
// "bert"): its config.json, its weights found by name and checked against
// the config, and the loader of a checkpoint directory as users have it
// (config.json + model.safetensors, the names BertModel.save_pretrained
// writes, with or without the "bert." prefix of the *ForXxx heads).
//
// The architecture (encoder/models/bert.h): word + learned absolute position
// + token type (row 0: one segment) embeddings, LayerNorm; per layer,
// post-norm attention with biased Q/K/V/output projections and a GELU FFN.

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "common/status_macros.h"
#include "encoder/core/tensor.h"

namespace neodb::encoder {

struct BertConfig {
  int64_t hidden_size = 768;
  int64_t num_hidden_layers = 12;
  int64_t num_attention_heads = 12;
  int64_t intermediate_size = 3072;  // the FFN width itself (unlike NeoBERT's)
  int64_t vocab_size = 30522;
  int64_t max_position_embeddings = 512;
  int64_t type_vocab_size = 2;
  int64_t pad_token_id = 0;
  double layer_norm_eps = 1e-12;

  int64_t head_dim() const { return hidden_size / num_attention_heads; }

  // Parses config.json text: model_type "bert"; hidden_act "gelu" (the erf
  // form; other activations are refused by name); position_embedding_type
  // "absolute" when present. Errors name the key.
  static absl::StatusOr<BertConfig> FromJson(std::string_view json_text);
  // Canonical JSON (sorted keys, fixed number format) for the model id.
  std::string ToJson() const;
  absl::Status Validate() const;
};

struct BertLayerWeights {
  Tensor qkv;       // [3C, C]: query, key, value weights stacked at load
  Tensor qkv_bias;  // [3C]
  Tensor wo;        // [C, C]   attention.output.dense
  Tensor wo_bias;   // [C]
  Tensor attention_norm_weight, attention_norm_bias;  // [C] attention.output.LayerNorm
  Tensor w1;        // [I, C]   intermediate.dense
  Tensor w1_bias;   // [I]
  Tensor w2;        // [C, I]   output.dense
  Tensor w2_bias;   // [C]
  Tensor ffn_norm_weight, ffn_norm_bias;  // [C] output.LayerNorm
};

struct BertWeights {
  BertConfig config;
  Tensor word_embeddings;      // [V, C]
  // position_embeddings [P, C] with token_type_embeddings[0] added at load:
  // every input is one segment, so the type row is a constant per position.
  Tensor position_embeddings;
  Tensor embedding_norm_weight, embedding_norm_bias;  // [C]
  std::vector<BertLayerWeights> layers;
  // "bert-" + 16 hex digits of XXH3_64 over the canonical config and every
  // tensor as stored in the file (name, shape, F32 values), in name order.
  std::string model_id;
};

// Loads <dir>/config.json and its weights file (WeightsFilePath: the plain
// or the .zst safetensors). F32, F16 or BF16 tensors; every shape checked;
// tensors of the pooler ("pooler."), of task heads ("cls.") and the
// "embeddings.position_ids" buffer are ignored; any other unexpected tensor
// is refused by name, as is a missing one.
absl::StatusOr<BertWeights> LoadBertCheckpoint(const std::string& dir);

// Parameters of the encoder as loaded (embeddings, layers, norms).
int64_t ParameterCount(const BertWeights& weights);

}  // namespace neodb::encoder
