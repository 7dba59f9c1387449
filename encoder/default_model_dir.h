#pragma once
// Where the default model lives: neodb ships a small NeoBERT-architecture
// model trained by its own tools (encoder/default_model/, see its README.md),
// used by `neodb serve`, `embed`, `tokenize` and `fill-mask` when no --model
// is given.
//
// Lookup order (the first directory holding a config.json wins):
//   1. $NEODB_DEFAULT_MODEL, when set (then it must hold a model);
//   2. <directory of the executable>/default_model, and
//      <directory of the executable>/../share/neodb/default_model (an
//      installed or relocated binary);
//   3. the source tree's encoder/default_model, baked in at build time.

#include <string>

#include "common/status_macros.h"

namespace neodb::encoder {

// The default model's directory, or NOT_FOUND naming every place looked at.
absl::StatusOr<std::string> FindDefaultModelDir();

// `model_dir` when non-empty, else FindDefaultModelDir().
absl::StatusOr<std::string> ResolveModelDir(const std::string& model_dir);

}  // namespace neodb::encoder
