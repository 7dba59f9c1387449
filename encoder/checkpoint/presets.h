#pragma once
// Named NeoBERT sizes for initialising a model from scratch (`neodb model
// init --preset`). "full" is the released architecture (NEOBERT.md §1).

#include <cstdint>
#include <string_view>

#include "common/status_macros.h"
#include "encoder/checkpoint/config.h"

namespace neodb::encoder {

// "tiny":  hidden 64,  2 layers,  4 heads, intermediate 192,  max_length 512.
// "small": hidden 256, 4 layers,  4 heads, intermediate 1024, max_length 4096.
// "full":  hidden 768, 28 layers, 12 heads, intermediate 3072, max_length 4096.
// norm_eps 1e-5, pad_token_id 0, rope_theta 10000 for all. An unknown name or
// an invalid vocab_size is INVALID_ARGUMENT.
absl::StatusOr<NeoBertConfig> PresetConfig(std::string_view name, int64_t vocab_size);

}  // namespace neodb::encoder
