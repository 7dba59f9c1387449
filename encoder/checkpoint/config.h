#pragma once
// NeoBertConfig: the architecture hyper-parameters, read from a Hugging Face
// config.json (NEOBERT.md §1) and written back in the same form.

#include <cstdint>
#include <string>
#include <string_view>

#include "common/env.h"
#include "common/status_macros.h"

namespace neodb::encoder {

struct NeoBertConfig {
  int64_t hidden_size = 768;
  int64_t num_hidden_layers = 28;
  int64_t num_attention_heads = 12;
  int64_t intermediate_size = 3072;  // NOT the FFN width: see ffn_dim()
  int64_t vocab_size = 30522;
  int64_t max_length = 4096;         // key "max_length", alias "max_position_embeddings"
  int64_t pad_token_id = 0;
  double norm_eps = 1e-5;
  double rope_theta = 10000.0;       // absent in the release; accepted if present

  int64_t head_dim() const { return hidden_size / num_attention_heads; }
  // round_up_to_multiple_of_8(int(2 * intermediate_size / 3)) → 2048 for NeoBERT.
  int64_t ffn_dim() const;

  // Parses config.json text. Rejects an unknown model_type, missing required
  // keys, non-positive sizes, hidden_size not divisible by the head count, with
  // a message that names the key.
  static absl::StatusOr<NeoBertConfig> FromJson(std::string_view json_text);
  // config.json at `path`, read through env; errors name the path.
  static absl::StatusOr<NeoBertConfig> FromFile(const std::string& path,
                                                Env* env = Env::Default());
  // config.json text as Hugging Face writes it (model_type "neobert"), with
  // torch_dtype "float32". Deterministic: keys sorted, fixed number format.
  std::string ToJson() const;
  // The same, naming the storage type of the weights ("float32", "float16",
  // "bfloat16") in torch_dtype.
  std::string ToJson(std::string_view torch_dtype) const;
  // Checks the invariants FromJson checks (for configs built in code).
  absl::Status Validate() const;
};

}  // namespace neodb::encoder
