// neodb keys add: makes an API key, prints it once, appends its hash to the
// key file `neodb serve --key-file` reads (the file never holds the key).
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>

#include "absl/strings/str_cat.h"
#include "api/auth/api_keys.h"
#include "common/env.h"
#include "common/status_macros.h"
#include "tools/neodb/commands.h"

namespace neodb::cli {
namespace {

struct KeysAddFlags {
  std::string key_file;
  std::string role;
  std::string name;
};

absl::Status KeysAdd(const KeysAddFlags& f) {
  auto role = api::ParseRole(f.role);
  if (!role.ok()) return role.status();
  if (f.name.find_first_of(" \t\r\n") != std::string::npos) {
    return absl::InvalidArgumentError("--name may not contain whitespace");
  }
  // Append only to a file the server would accept: a broken one is reported
  // rather than made worse.
  std::string existing;
  if (FileExists(Env::Default(), f.key_file)) {
    ASSIGN_OR_RETURN(existing, ReadFileToString(Env::Default(), f.key_file));
    if (existing.find_first_not_of(" \t\r\n") != std::string::npos) {
      auto keys = api::ParseKeyFile(existing, f.key_file);
      if (!keys.ok()) return keys.status();
    }
  }
  auto key = api::GenerateApiKey();
  if (!key.ok()) return key.status();
  const std::string name =
      f.name.empty() ? absl::StrCat(f.role, "-", api::Sha256Hex(*key).substr(0, 8)) : f.name;
  std::string line = api::KeyFileLine(*key, *role, name) + "\n";
  if (!existing.empty() && existing.back() != '\n') line = "\n" + line;
  // 0600 on creation: only hashes, but nobody else needs to read them.
  int fd = ::open(f.key_file.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
  if (fd < 0) return absl::PermissionDeniedError(absl::StrCat("cannot open ", f.key_file));
  const bool ok = ::write(fd, line.data(), line.size()) == static_cast<ssize_t>(line.size()) &&
                  ::fsync(fd) == 0;
  ::close(fd);
  if (!ok) return absl::DataLossError(absl::StrCat("cannot write ", f.key_file));
  std::printf("%s\n", key->c_str());
  std::fprintf(stderr,
               "neodb: added %s key '%s' to %s; the key above is shown only now (send the "
               "server SIGHUP to load it)\n",
               f.role.c_str(), name.c_str(), f.key_file.c_str());
  return absl::OkStatus();
}

}  // namespace

void RegisterKeysCommands(CLI::App& app) {
  CLI::App* keys = app.add_subcommand("keys", "API keys for `neodb serve --key-file`");
  keys->require_subcommand(1);
  auto f = std::make_shared<KeysAddFlags>();
  CLI::App* add = keys->add_subcommand("add", "Make a key, print it once, append its hash");
  add->add_option("--key-file", f->key_file, "Key file (created 0600 if missing)")->required();
  add->add_option("--role", f->role, "read, write or admin")->required();
  add->add_option("--name", f->name, "Whose key, for logs (default: <role>-<hash prefix>)");
  add->callback([f] { ExitIfError(KeysAdd(*f)); });
}

}  // namespace neodb::cli
