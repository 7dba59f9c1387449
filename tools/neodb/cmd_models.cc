// neodb models list: the model registry as a client sees it, derived from
// ListCollections (each collection's model id and checkpoint directory) and
// Stats (the default model), with each directory's lineage.json (written by
// finetune and adapt). No new RPC: the collections' specs are where the
// server records which checkpoint serves what.
#include <cstdio>
#include <filesystem>
#include <map>
#include <memory>

#include "common/env.h"
#include "common/status_macros.h"
#include "nlohmann/json.hpp"
#include "tools/neodb/adapt_client.h"
#include "tools/neodb/commands.h"

namespace neodb::cli {
namespace {

using json = nlohmann::json;

struct ModelsArgs {
  ClientFlags client;  // --server, --timeout, --api-key, --tls-*
};

// One JSON line per (model_id, model_dir): whether it is the default, the
// collections on it, and its lineage summary when the directory has one
// ("lineage_stale" when lineage.json names another model id).
absl::Status RunModelsList(const ModelsArgs& a) {
  AdaptClient server(a.client);
  ASSIGN_OR_RETURN(const v1::ListCollectionsResponse list, server.ListCollections());
  ASSIGN_OR_RETURN(const v1::StatsResponse stats, server.Stats());
  std::map<std::pair<std::string, std::string>, std::vector<std::string>> users;
  for (const v1::CollectionInfo& c : list.collections()) {
    users[{c.model_id(), c.model_dir()}].push_back(c.spec().name());
  }
  bool default_listed = false;
  for (const auto& [key, _] : users) default_listed |= key.first == stats.model_id();
  if (!default_listed) users[{stats.model_id(), ""}];
  for (const auto& [key, names] : users) {
    const auto& [id, dir] = key;
    json line = {{"model_id", id},
                 {"model_dir", dir},
                 {"default", id == stats.model_id()},
                 {"collections", names}};
    if (!dir.empty()) {
      const absl::StatusOr<std::string> text =
          ReadFileToString(Env::Default(), (std::filesystem::path(dir) / "lineage.json").string());
      const json lineage =
          text.ok() ? json::parse(*text, nullptr, /*allow_exceptions=*/false) : json();
      if (lineage.is_object()) {
        line["lineage"] = {{"parent", lineage.value("parent", json())},
                           {"train_hash", lineage.value("train_hash", json())},
                           {"steps", lineage.value("steps", json())},
                           {"negatives", lineage.value("negatives", json())},
                           {"dtype", lineage.value("dtype", json())}};
        if (lineage.value("model_id", id) != id) line["lineage_stale"] = true;
      }
    }
    std::printf("%s\n", line.dump().c_str());
  }
  return absl::OkStatus();
}

}  // namespace

void RegisterModelsCommands(CLI::App& app) {
  auto m = std::make_shared<ModelsArgs>();
  CLI::App* models = app.add_subcommand("models", "The checkpoints a server's collections use");
  models->require_subcommand(1);
  CLI::App* list = models->add_subcommand(
      "list", "One JSON line per model: id, directory, lineage, collections using it");
  AddClientFlags(list, &m->client);
  list->callback([m] { ExitIfError(RunModelsList(*m)); });
}

}  // namespace neodb::cli
