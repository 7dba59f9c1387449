// neodb: the one binary. Subcommands live in cmd_*.cc (see commands.h).
#include <cstdio>
#include <functional>
#include <string>

#include "common/openmp_wait.h"
#include "encoder/ops/cpu_kernels.h"
#include "tools/neodb/commands.h"

namespace neodb::cli {

void ExitIfError(const absl::Status& status) {
  if (status.ok()) return;
  std::fprintf(stderr, "neodb: %s\n", std::string(status.message()).c_str());
  throw ExitRequest{status.code() == absl::StatusCode::kInvalidArgument ? 2 : 1};
}

}  // namespace neodb::cli

int main(int argc, char** argv) {
  neodb::ReexecWithPassiveOpenMpWait(argv);
  CLI::App app{"neodb: a vector search database with a built-in NeoBERT encoder"};
  app.require_subcommand(1);
  app.set_version_flag(
      "--version", [] { return neodb::cli::VersionText(); },
      "Print version, git commit, build options and CPU kernels, then exit");
  neodb::cli::RegisterModelCommands(app);
  neodb::cli::RegisterEncoderCommands(app);
  neodb::cli::RegisterTrainCommands(app);
  neodb::cli::RegisterTokenizerCommands(app);
  neodb::cli::RegisterPretrainCommands(app);
#ifdef NEODB_BUILD_SERVER
  neodb::cli::RegisterServerCommands(app);
  neodb::cli::RegisterClientCommands(app);
  neodb::cli::RegisterKeysCommands(app);
  neodb::cli::RegisterRestoreCommands(app);
#endif
#ifdef NEODB_BUILD_ADAPT
  neodb::cli::RegisterAdaptCommands(app);
  neodb::cli::RegisterModelsCommands(app);
#endif
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  } catch (const neodb::cli::ExitRequest& e) {
    return e.code;
  }
  return 0;
}
