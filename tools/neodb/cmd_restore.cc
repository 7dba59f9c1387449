// neodb restore: offline, builds a data directory from a backup (`neodb
// backup`) after checking every file of it against its manifest.
#include <cstdio>

#include "engine/backup.h"
#include "tools/neodb/commands.h"

namespace neodb::cli {

void RegisterRestoreCommands(CLI::App& app) {
  auto from = std::make_shared<std::string>();
  auto data_dir = std::make_shared<std::string>();
  auto verify_only = std::make_shared<bool>(false);
  CLI::App* c = app.add_subcommand(
      "restore",
      "Build a new data directory from a backup (server stopped; checks every file first)");
  c->add_option("--from", *from, "Backup directory")->required();
  c->add_option("--data-dir", *data_dir, "New data directory (must not exist)");
  c->add_flag("--verify-only", *verify_only, "Only check the backup's files against its manifest");
  c->callback([=] {
    if (*verify_only) {
      auto m = engine::VerifyBackup(*from);
      ExitIfError(m.status());
      std::printf("neodb: %s is intact: %zu files, %zu models, covered sequence %llu\n",
                  from->c_str(), m->files.size(), m->models.size(),
                  static_cast<unsigned long long>(m->covered_seq));
      return;
    }
    if (data_dir->empty()) ExitIfError(absl::InvalidArgumentError("--data-dir is required"));
    ExitIfError(engine::RestoreBackup(*from, *data_dir));
    std::printf("neodb: restored %s into %s (indexes are rebuilt on its first start)\n",
                from->c_str(), data_dir->c_str());
  });
}

}  // namespace neodb::cli
