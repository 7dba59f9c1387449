// neodb embed / tokenize. (Filled in by the encoder work.)
#include "tools/neodb/commands.h"

namespace neodb::cli {
void RegisterEncoderCommands(CLI::App& app) {}
}  // namespace neodb::cli
