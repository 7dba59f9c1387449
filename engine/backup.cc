#include "engine/backup.h"

#include <openssl/evp.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <set>

#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "common/file_chunks.h"
#include "common/status_macros.h"
#include "db/store.h"
#include "nlohmann/json.hpp"

namespace neodb::engine {
namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;

bool SafeRelative(const std::string& p) {
  if (p.empty() || p[0] == '/') return false;
  for (const auto& part : fs::path(p)) {
    if (part == ".." || part == ".") return false;
  }
  return true;
}

}  // namespace

absl::StatusOr<std::string> FileSha256(const std::string& path, Env* env) {
  std::unique_ptr<EVP_MD_CTX, void (*)(EVP_MD_CTX*)> ctx(EVP_MD_CTX_new(), EVP_MD_CTX_free);
  EVP_DigestInit_ex(ctx.get(), EVP_sha256(), nullptr);
  RETURN_IF_ERROR(ForEachFileChunk(env, path, 1 << 20, [&](std::string_view chunk) {
    EVP_DigestUpdate(ctx.get(), chunk.data(), chunk.size());
  }));
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  EVP_DigestFinal_ex(ctx.get(), digest, &len);
  return absl::BytesToHexString(absl::string_view(reinterpret_cast<const char*>(digest), len));
}

namespace {

// DescribeFiles below `dir`, whose path relative to the root is `rel`.
absl::Status DescribeTree(Env* env, const std::string& dir, const std::string& rel,
                          std::vector<BackupFile>* out) {
  ASSIGN_OR_RETURN(const std::vector<std::string> names, env->GetChildren(dir));
  for (const std::string& name : names) {
    const std::string path = (fs::path(dir) / name).string();
    const std::string relative = rel.empty() ? name : absl::StrCat(rel, "/", name);
    // Not following symlinks: a link is refused, never copied through.
    ASSIGN_OR_RETURN(const FileKind kind, env->GetFileKind(path, /*follow_symlinks=*/false));
    if (kind == FileKind::kDirectory) {
      RETURN_IF_ERROR(DescribeTree(env, path, relative, out));
      continue;
    }
    if (kind != FileKind::kFile) {
      return absl::FailedPreconditionError(absl::StrCat(path, " is not a regular file"));
    }
    BackupFile f;
    f.path = relative;
    ASSIGN_OR_RETURN(f.size, env->GetFileSize(path));
    ASSIGN_OR_RETURN(f.sha256, FileSha256(path, env));
    out->push_back(std::move(f));
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<std::vector<BackupFile>> DescribeFiles(const std::string& root, Env* env) {
  std::vector<BackupFile> out;
  RETURN_IF_ERROR(DescribeTree(env, root, "", &out));
  std::sort(out.begin(), out.end(),
            [](const BackupFile& a, const BackupFile& b) { return a.path < b.path; });
  return out;
}

std::string ManifestToJson(const BackupManifest& m) {
  json j = {{"format", "neodb-backup"},
            {"version", m.version},
            {"covered_seq", m.covered_seq},
            {"snapshot_seq", m.snapshot_seq}};
  j["files"] = json::array();
  for (const auto& f : m.files) {
    j["files"].push_back({{"path", f.path}, {"size", f.size}, {"sha256", f.sha256}});
  }
  j["models"] = json::array();
  for (const auto& x : m.models) {
    j["models"].push_back({{"source", x.source}, {"dir", x.dir}, {"model_id", x.model_id}});
  }
  return j.dump(2) + "\n";
}

absl::StatusOr<BackupManifest> ManifestFromJson(const std::string& text) {
  json j = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_object()) {
    return absl::DataLossError("manifest.json is not valid JSON (truncated?)");
  }
  auto str = [](const json& o, const char* k) -> const std::string* {
    auto it = o.find(k);
    return it != o.end() && it->is_string() ? it->get_ptr<const std::string*>() : nullptr;
  };
  auto u64 = [](const json& o, const char* k, uint64_t* v) {
    auto it = o.find(k);
    if (it == o.end() || !it->is_number_unsigned()) return false;
    *v = it->get<uint64_t>();
    return true;
  };
  const std::string* format = str(j, "format");
  if (!format || *format != "neodb-backup") {
    return absl::InvalidArgumentError("manifest.json is not a neodb backup manifest");
  }
  uint64_t version = 0;
  if (!u64(j, "version", &version) || version != kBackupFormatVersion) {
    return absl::InvalidArgumentError(
        absl::StrCat("backup format version ", j.value("version", json()).dump(), " is not ",
                     kBackupFormatVersion, " (made by another neodb version?)"));
  }
  BackupManifest m;
  m.version = static_cast<int>(version);
  if (!u64(j, "covered_seq", &m.covered_seq)) {
    return absl::DataLossError("manifest.json: covered_seq missing");
  }
  // Optional: backups made before snapshots were carried have none.
  if (j.contains("snapshot_seq") &&
      (!u64(j, "snapshot_seq", &m.snapshot_seq) || m.snapshot_seq > m.covered_seq)) {
    return absl::DataLossError(
        "manifest.json: snapshot_seq is not a position at or before covered_seq");
  }
  if (!j.contains("files") || !j["files"].is_array() || !j.contains("models") ||
      !j["models"].is_array()) {
    return absl::DataLossError("manifest.json: files or models missing");
  }
  std::set<std::string> seen;
  for (const auto& f : j["files"]) {
    BackupFile b;
    const std::string* path = f.is_object() ? str(f, "path") : nullptr;
    const std::string* sha = f.is_object() ? str(f, "sha256") : nullptr;
    if (!path || !sha || !u64(f, "size", &b.size) || sha->size() != 64) {
      return absl::DataLossError("manifest.json: a file entry lacks path, size or sha256");
    }
    if (!SafeRelative(*path) || !seen.insert(*path).second) {
      return absl::InvalidArgumentError(
          absl::StrCat("manifest.json: file path '", *path, "' is unsafe or repeated"));
    }
    b.path = *path;
    b.sha256 = *sha;
    m.files.push_back(std::move(b));
  }
  for (const auto& x : j["models"]) {
    BackupModel b;
    const std::string* source = x.is_object() ? str(x, "source") : nullptr;
    const std::string* dir = x.is_object() ? str(x, "dir") : nullptr;
    const std::string* id = x.is_object() ? str(x, "model_id") : nullptr;
    if (!source || !dir || !id || !SafeRelative(*dir)) {
      return absl::DataLossError("manifest.json: a model entry is malformed");
    }
    m.models.push_back({*source, *dir, *id});
  }
  return m;
}

absl::StatusOr<BackupManifest> VerifyBackup(const std::string& from, Env* env) {
  const std::string manifest_path = (fs::path(from) / "manifest.json").string();
  absl::StatusOr<std::string> text = ReadFileToString(env, manifest_path);
  if (absl::IsNotFound(text.status())) {
    return absl::DataLossError(
        absl::StrCat(from, " has no manifest.json: not a complete backup (was it interrupted?)"));
  }
  RETURN_IF_ERROR(text.status());
  ASSIGN_OR_RETURN(BackupManifest m, ManifestFromJson(*text));
  bool has_store = false;
  for (const auto& f : m.files) {
    if (absl::StartsWith(f.path, "store/")) has_store = true;
    const std::string p = (fs::path(from) / f.path).string();
    const absl::StatusOr<FileKind> kind = env->GetFileKind(p, /*follow_symlinks=*/false);
    if (!kind.ok() || *kind != FileKind::kFile) {
      return absl::DataLossError(absl::StrCat("backup file ", f.path, " is missing"));
    }
    const absl::StatusOr<uint64_t> size = env->GetFileSize(p);
    if (!size.ok() || *size != f.size) {
      return absl::DataLossError(absl::StrCat("backup file ", f.path, " has ",
                                              size.ok() ? *size : 0, " bytes, the manifest says ",
                                              f.size, " (truncated or altered)"));
    }
    ASSIGN_OR_RETURN(std::string sha, FileSha256(p, env));
    if (sha != f.sha256) {
      return absl::DataLossError(
          absl::StrCat("backup file ", f.path, " fails its SHA-256 check (corrupted)"));
    }
  }
  if (!has_store) return absl::DataLossError("the backup's manifest lists no store files");
  return m;
}

absl::Status RestoreBackup(const std::string& from, const std::string& data_dir,
                           const RestoreOptions& options) {
  Env* env = options.env != nullptr ? options.env : Env::Default();
  if (env->GetFileKind(data_dir, /*follow_symlinks=*/false).ok()) {
    return absl::AlreadyExistsError(
        absl::StrCat(data_dir, " exists; restore builds a new data directory"));
  }
  // Everything is checked before anything is written.
  ASSIGN_OR_RETURN(BackupManifest m, VerifyBackup(from, env));
  const fs::path target = fs::absolute(data_dir).lexically_normal();
  const fs::path tmp =
      target.parent_path() / absl::StrCat(".", target.filename().string(), ".restore-", getpid());
  RETURN_IF_ERROR(env->DeleteTree(tmp.string()));  // a crashed restore's, by a recycled pid
  auto fail = [&](absl::Status s) {
    env->DeleteTree(tmp.string()).IgnoreError();  // the error that matters is s
    return s;
  };
  // Each directory made, to sync once its entries are in.
  std::set<std::string> dirs = {tmp.string(), (tmp / "snapshots").string()};
  if (absl::Status s = env->CreateDir((tmp / "snapshots").string()); !s.ok()) return fail(s);
  for (const auto& f : m.files) {
    const fs::path dst = tmp / f.path;
    for (fs::path d = dst.parent_path(); d != tmp; d = d.parent_path()) dirs.insert(d.string());
    absl::Status s = env->CreateDir(dst.parent_path().string());
    if (s.ok()) s = env->CopyFile((fs::path(from) / f.path).string(), dst.string());
    if (!s.ok()) return fail(s);
  }
  // Checked again after the copy: the source may have changed since.
  for (const auto& f : m.files) {
    auto sha = FileSha256((tmp / f.path).string(), env);
    if (!sha.ok() || *sha != f.sha256) {
      return fail(absl::DataLossError(
          absl::StrCat("backup file ", f.path, " changed while it was restored")));
    }
  }
  if (!m.models.empty()) {
    // Closed before the rename.
    db::StoreOptions so;
    so.test_faults = options.test_faults;
    auto store = db::Store::Open((tmp / "store").string(), so);
    if (!store.ok()) return fail(store.status());
    auto specs = (*store)->ListCollections();
    if (!specs.ok()) return fail(specs.status());
    for (const auto& spec : *specs) {
      for (const auto& model : m.models) {
        if (spec.model_dir != model.source) continue;
        db::CollectionUpdate u;
        u.model_dir = (target / model.dir).string();
        auto r = (*store)->UpdateCollection(spec.name, u);
        if (!r.ok()) return fail(r.status());
      }
    }
    if (absl::Status s = (*store)->Flush(); !s.ok()) return fail(s);
  }
  // Deepest first, so each directory's entry in its parent is synced after
  // the directory itself.
  for (auto it = dirs.rbegin(); it != dirs.rend(); ++it) {
    if (absl::Status s = env->SyncDir(*it); !s.ok()) return fail(s);
  }
  if (absl::Status s = env->RenameFile(tmp.string(), target.string()); !s.ok()) return fail(s);
  if (absl::Status s = env->SyncDir(target.parent_path().string()); !s.ok()) {
    // Whether the rename survives a power loss is unknown: take it back.
    env->DeleteTree(target.string()).IgnoreError();
    return s;
  }
  return absl::OkStatus();
}

}  // namespace neodb::engine
