// neodb model …: checkpoint utilities. (Filled in by the encoder work.)
#include "tools/neodb/commands.h"

namespace neodb::cli {
void RegisterModelCommands(CLI::App& app) {}
}  // namespace neodb::cli
