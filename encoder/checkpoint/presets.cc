#include "encoder/checkpoint/presets.h"

#include "absl/strings/str_cat.h"

namespace neodb::encoder {

absl::StatusOr<NeoBertConfig> PresetConfig(std::string_view name, int64_t vocab_size) {
  NeoBertConfig c;
  if (name == "tiny") {
    c.hidden_size = 64;
    c.num_hidden_layers = 2;
    c.num_attention_heads = 4;
    c.intermediate_size = 192;
    c.max_length = 512;
  } else if (name == "small") {
    c.hidden_size = 256;
    c.num_hidden_layers = 4;
    c.num_attention_heads = 4;
    c.intermediate_size = 1024;
    c.max_length = 4096;
  } else if (name == "full") {
    c.hidden_size = 768;
    c.num_hidden_layers = 28;
    c.num_attention_heads = 12;
    c.intermediate_size = 3072;
    c.max_length = 4096;
  } else {
    return absl::InvalidArgumentError(
        absl::StrCat("unknown preset \"", std::string(name), "\" (expected tiny, small or full)"));
  }
  c.vocab_size = vocab_size;
  c.pad_token_id = 0;
  c.norm_eps = 1e-5;
  c.rope_theta = 10000.0;
  RETURN_IF_ERROR(c.Validate());
  return c;
}

}  // namespace neodb::encoder
