#include "encoder/checkpoint/presets.h"

#include "absl/strings/str_cat.h"

namespace neodb::encoder {
namespace {

// The sizes a preset sets; everything else is the same for all of them.
struct Preset {
  std::string_view name;
  int64_t hidden_size, num_hidden_layers, num_attention_heads, intermediate_size, max_length;
};

constexpr Preset kPresets[] = {
    {"tiny", 64, 2, 4, 192, 512},
    {"small", 256, 4, 4, 1024, 4096},
    {"full", 768, 28, 12, 3072, 4096},
};

}  // namespace

absl::StatusOr<NeoBertConfig> PresetConfig(std::string_view name, int64_t vocab_size) {
  for (const Preset& p : kPresets) {
    if (p.name != name) continue;
    const NeoBertConfig c{.hidden_size = p.hidden_size,
                          .num_hidden_layers = p.num_hidden_layers,
                          .num_attention_heads = p.num_attention_heads,
                          .intermediate_size = p.intermediate_size,
                          .vocab_size = vocab_size,
                          .max_length = p.max_length,
                          .pad_token_id = 0,
                          .norm_eps = 1e-5,
                          .rope_theta = 10000.0};
    RETURN_IF_ERROR(c.Validate());
    return c;
  }
  return absl::InvalidArgumentError(
      absl::StrCat("unknown preset \"", std::string(name), "\" (expected tiny, small or full)"));
}

}  // namespace neodb::encoder
