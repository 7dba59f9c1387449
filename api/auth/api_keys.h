#pragma once
// API keys: the key file format, the roles, and the live set the server
// checks calls against.
//
// Key file: one key per line, `sha256:<64 hex digits> <role> <name>`, where
// the hex is SHA-256 of the key a client presents, role is read, write or
// admin, and name (no spaces) says whose key it is in logs. Blank lines and
// lines starting with '#' are ignored. The file holds only hashes: reading it
// does not give anyone a key. `neodb keys add` writes it.

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "common/env.h"

namespace neodb::api {

// Ordered: a role may call everything a lower one may.
enum class Role { kRead = 1, kWrite = 2, kAdmin = 3 };

absl::StatusOr<Role> ParseRole(absl::string_view name);
absl::string_view RoleName(Role role);

struct ApiKey {
  std::string sha256_hex;  // 64 lowercase hex digits
  Role role = Role::kRead;
  std::string name;
};

// Lowercase hex SHA-256 of `data`.
std::string Sha256Hex(absl::string_view data);

// A fresh key: "neodb_" + 64 hex digits (256 bits from the OS's CSPRNG).
absl::StatusOr<std::string> GenerateApiKey();

// The key file's line for `key` (no newline).
std::string KeyFileLine(absl::string_view key, Role role, absl::string_view name);

// Parses a key file's contents. INVALID_ARGUMENT naming `origin` and the
// line for any malformed line, a duplicate hash, or a file without keys.
absl::StatusOr<std::vector<ApiKey>> ParseKeyFile(absl::string_view contents,
                                                 absl::string_view origin);
// Reads (through env) and parses the file at `path`: NOT_FOUND when it does
// not exist, the Env's error naming the path when it cannot be read.
absl::StatusOr<std::vector<ApiKey>> ReadKeyFile(const std::string& path,
                                                Env* env = Env::Default());

// The set of keys a server accepts, loaded from a key file and reloadable.
// Thread-safe: Find may run concurrently with Reload.
class KeyRing {
 public:
  // Loads `path`, and reloads it, through env (not owned; outlives the
  // ring); fails as ReadKeyFile does.
  static absl::StatusOr<std::shared_ptr<KeyRing>> Open(const std::string& path,
                                                       Env* env = Env::Default());

  // Re-reads the file. On failure the keys in use stay as they were.
  absl::Status Reload();

  // The key whose hash matches `presented`, if any.
  std::optional<ApiKey> Find(absl::string_view presented) const;
  size_t size() const;
  const std::string& path() const { return path_; }

 private:
  KeyRing(std::string path, Env* env) : path_(std::move(path)), env_(env) {}
  const std::string path_;
  Env* const env_;
  mutable absl::Mutex mu_;
  absl::flat_hash_map<std::string, ApiKey> by_hash_ ABSL_GUARDED_BY(mu_);
};

}  // namespace neodb::api
