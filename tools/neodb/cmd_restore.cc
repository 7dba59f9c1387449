// neodb restore: offline, builds a data directory from a backup (`neodb
// backup`) after checking every file of it against its manifest.
#include <cstdio>

#include "absl/strings/str_cat.h"
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
      std::printf(
          "neodb: %s is intact: %zu files, %zu models, covered sequence %llu, index snapshots "
          "%s\n",
          from->c_str(), m->files.size(), m->models.size(),
          static_cast<unsigned long long>(m->covered_seq),
          m->snapshot_seq == 0 ? "none"
                               : absl::StrCat("at sequence ", m->snapshot_seq).c_str());
      return;
    }
    if (data_dir->empty()) ExitIfError(absl::InvalidArgumentError("--data-dir is required"));
    ExitIfError(engine::RestoreBackup(*from, *data_dir));
    // Whether the first start loads the snapshots or rebuilds is its decision
    // (backup.h); its log line and `neodb stats` say which.
    std::printf("neodb: restored %s into %s\n", from->c_str(), data_dir->c_str());
  });
}

}  // namespace neodb::cli
