#include "api/auth/api_keys.h"

#include <openssl/rand.h>
#include <openssl/sha.h>

#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"

namespace neodb::api {

absl::StatusOr<Role> ParseRole(absl::string_view name) {
  if (name == "read") return Role::kRead;
  if (name == "write") return Role::kWrite;
  if (name == "admin") return Role::kAdmin;
  return absl::InvalidArgumentError(
      absl::StrCat("unknown role '", name, "' (read, write or admin)"));
}

absl::string_view RoleName(Role role) {
  switch (role) {
    case Role::kRead:
      return "read";
    case Role::kWrite:
      return "write";
    case Role::kAdmin:
      return "admin";
  }
  return "?";
}

std::string Sha256Hex(absl::string_view data) {
  unsigned char digest[SHA256_DIGEST_LENGTH];
  SHA256(reinterpret_cast<const unsigned char*>(data.data()), data.size(), digest);
  return absl::BytesToHexString(
      absl::string_view(reinterpret_cast<const char*>(digest), sizeof digest));
}

absl::StatusOr<std::string> GenerateApiKey() {
  unsigned char bytes[32];
  if (RAND_bytes(bytes, sizeof bytes) != 1) {
    return absl::InternalError("the system's random generator failed");
  }
  return absl::StrCat("neodb_", absl::BytesToHexString(absl::string_view(
                                    reinterpret_cast<const char*>(bytes), sizeof bytes)));
}

std::string KeyFileLine(absl::string_view key, Role role, absl::string_view name) {
  return absl::StrCat("sha256:", Sha256Hex(key), " ", RoleName(role), " ", name);
}

absl::StatusOr<std::vector<ApiKey>> ParseKeyFile(absl::string_view contents,
                                                 absl::string_view origin) {
  std::vector<ApiKey> keys;
  absl::flat_hash_map<std::string, int> seen;
  int line_no = 0;
  for (absl::string_view line : absl::StrSplit(contents, '\n')) {
    ++line_no;
    line = absl::StripAsciiWhitespace(line);
    if (line.empty() || line[0] == '#') continue;
    auto where = [&] { return absl::StrCat(origin, ":", line_no, ": "); };
    std::vector<absl::string_view> f = absl::StrSplit(line, ' ', absl::SkipWhitespace());
    if (f.size() != 3) {
      return absl::InvalidArgumentError(
          absl::StrCat(where(), "expected `sha256:<hex> <role> <name>`"));
    }
    absl::string_view hex = f[0];
    if (!absl::ConsumePrefix(&hex, "sha256:") || hex.size() != 64 ||
        !std::all_of(hex.begin(), hex.end(),
                     [](char c) { return absl::ascii_isdigit(c) || (c >= 'a' && c <= 'f'); })) {
      return absl::InvalidArgumentError(
          absl::StrCat(where(), "the hash must be sha256: and 64 lowercase hex digits"));
    }
    auto role = ParseRole(f[1]);
    if (!role.ok())
      return absl::InvalidArgumentError(absl::StrCat(where(), role.status().message()));
    auto [it, fresh] = seen.emplace(std::string(hex), line_no);
    if (!fresh) {
      return absl::InvalidArgumentError(
          absl::StrCat(where(), "the same key is already on line ", it->second));
    }
    keys.push_back(ApiKey{std::string(hex), *role, std::string(f[2])});
  }
  if (keys.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat(origin, ": no keys (add one with `neodb keys add`)"));
  }
  return keys;
}

absl::StatusOr<std::vector<ApiKey>> ReadKeyFile(const std::string& path, Env* env) {
  absl::StatusOr<std::string> text = ReadFileToString(env, path);
  if (absl::IsNotFound(text.status())) {
    return absl::NotFoundError(absl::StrCat("cannot read key file ", path));
  }
  if (!text.ok()) return text.status();
  return ParseKeyFile(*text, path);
}

absl::StatusOr<std::shared_ptr<KeyRing>> KeyRing::Open(const std::string& path, Env* env) {
  std::shared_ptr<KeyRing> ring(new KeyRing(path, env));
  absl::Status s = ring->Reload();
  if (!s.ok()) return s;
  return ring;
}

absl::Status KeyRing::Reload() {
  auto keys = ReadKeyFile(path_, env_);
  if (!keys.ok()) return keys.status();
  absl::flat_hash_map<std::string, ApiKey> fresh;
  for (auto& k : *keys) {
    std::string h = k.sha256_hex;
    fresh.emplace(std::move(h), std::move(k));
  }
  absl::MutexLock lock(&mu_);
  by_hash_ = std::move(fresh);
  return absl::OkStatus();
}

std::optional<ApiKey> KeyRing::Find(absl::string_view presented) const {
  // Looked up by hash: timing reveals nothing usable about a key, only about
  // its SHA-256, which an attacker cannot choose.
  const std::string h = Sha256Hex(presented);
  absl::MutexLock lock(&mu_);
  auto it = by_hash_.find(h);
  if (it == by_hash_.end()) return std::nullopt;
  return it->second;
}

size_t KeyRing::size() const {
  absl::MutexLock lock(&mu_);
  return by_hash_.size();
}

}  // namespace neodb::api
