#include "index/snapshot.h"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <filesystem>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "common/atomic_file.h"
#include "common/status_macros.h"
#include "index/index_factory.h"
#include "index/index_util.h"
#include "spdlog/spdlog.h"

namespace neodb::index {
namespace {

namespace fs = std::filesystem;

constexpr char kSnapshotMagic[] = "NDBSNAP1";
constexpr char kPrefix[] = "snapshot-";
constexpr char kSuffix[] = ".nsnap";
constexpr char kTempSuffix[] = ".tmp";

void WriteManifest(ByteWriter* w, const SnapshotManifest& m) {
  w->U32(m.format_version);
  w->Str(m.spec);
  w->U32(static_cast<uint32_t>(m.dimension));
  w->U8(static_cast<uint8_t>(m.metric));
  w->U64(m.count);
  w->U64(m.covered_seq);
  w->Str(m.model_id);
  w->U64(m.payload_bytes);
  w->U64(m.payload_checksum);
}

bool IsSnapshotName(const std::string& name) {
  return name.rfind(kPrefix, 0) == 0 && name.size() > std::strlen(kSuffix) &&
         name.compare(name.size() - std::strlen(kSuffix), std::string::npos, kSuffix) == 0;
}

// The names in `dir` (none when it cannot be listed: no snapshot there).
std::vector<std::string> Children(Env* env, const std::string& dir) {
  absl::StatusOr<std::vector<std::string>> names = env->GetChildren(dir);
  return names.ok() ? *std::move(names) : std::vector<std::string>{};
}

// Snapshot file names in `dir`, newest first (names sort by covered seq, then time).
std::vector<std::string> ListSnapshots(Env* env, const std::string& dir) {
  std::vector<std::string> names;
  for (std::string& name : Children(env, dir)) {
    if (IsSnapshotName(name)) names.push_back(std::move(name));
  }
  std::sort(names.rbegin(), names.rend());
  return names;
}

absl::StatusOr<LoadedSnapshot> ReadSnapshotFile(Env* env, const std::string& path) {
  ASSIGN_OR_RETURN(const std::string bytes, ReadFileToString(env, path));
  ByteReader r(bytes);
  char magic[8];
  if (!r.Raw(magic, 8) || std::string_view(magic, 8) != std::string_view(kSnapshotMagic, 8)) {
    return absl::DataLossError("bad magic");
  }
  SnapshotManifest m;
  uint32_t dim;
  uint8_t metric;
  uint64_t manifest_checksum;
  const size_t manifest_start = 8;
  if (!r.U32(&m.format_version) || !r.Str(&m.spec) || !r.U32(&dim) || !r.U8(&metric) ||
      !r.U64(&m.count) || !r.U64(&m.covered_seq) || !r.Str(&m.model_id) ||
      !r.U64(&m.payload_bytes) || !r.U64(&m.payload_checksum)) {
    return absl::DataLossError("truncated manifest");
  }
  const size_t manifest_end = bytes.size() - r.rest().size();
  if (!r.U64(&manifest_checksum) ||
      manifest_checksum != Checksum64(std::string_view(bytes).substr(
                               manifest_start, manifest_end - manifest_start))) {
    return absl::DataLossError("manifest checksum mismatch");
  }
  if (m.format_version != kSnapshotFormatVersion) {
    return absl::DataLossError(absl::StrCat("unsupported format version ", m.format_version));
  }
  if (metric > 2) return absl::DataLossError("bad metric");
  m.dimension = static_cast<int>(dim);
  m.metric = static_cast<Metric>(metric);
  std::string_view payload = r.rest();
  if (payload.size() != m.payload_bytes) {
    return absl::DataLossError(absl::StrCat("payload is ", payload.size(), " bytes, manifest says ",
                                            m.payload_bytes, " (truncated?)"));
  }
  if (Checksum64(payload) != m.payload_checksum) {
    return absl::DataLossError("payload checksum mismatch");
  }
  ASSIGN_OR_RETURN(std::unique_ptr<VectorIndex> index, DeserializeIndex(payload));
  if (index->spec() != m.spec || index->dimension() != m.dimension || index->metric() != m.metric ||
      index->size() != m.count) {
    return absl::DataLossError("index does not match its manifest");
  }
  return LoadedSnapshot{std::move(m), std::move(index), path};
}

}  // namespace

absl::StatusOr<std::string> WriteSnapshot(const std::string& dir, const VectorIndex& index,
                                          uint64_t covered_seq, const std::string& model_id,
                                          int keep, Env* env) {
  RETURN_IF_ERROR(env->CreateDir(dir));
  ASSIGN_OR_RETURN(std::string payload, index.Serialize());
  SnapshotManifest m;
  m.spec = index.spec();
  m.dimension = index.dimension();
  m.metric = index.metric();
  m.count = index.size();  // REQUIRES (snapshot.h): no concurrent mutation
  m.covered_seq = covered_seq;
  m.model_id = model_id;
  m.payload_bytes = payload.size();
  m.payload_checksum = Checksum64(payload);
  ByteWriter header;
  header.Raw(kSnapshotMagic, 8);
  WriteManifest(&header, m);
  header.U64(Checksum64(std::string_view(header.out()).substr(8)));

  const int64_t micros = std::chrono::duration_cast<std::chrono::microseconds>(
                             std::chrono::system_clock::now().time_since_epoch())
                             .count();
  const std::string name =
      absl::StrFormat("%s%020u-%016x%s", kPrefix, covered_seq, micros, kSuffix);
  const std::string final_path = (fs::path(dir) / name).string();
  const std::string temp_path = final_path + kTempSuffix;
  RETURN_IF_ERROR(WriteFileAtomically(env, final_path, temp_path, {header.out(), payload}));

  // Prune: keep the newest `keep` snapshots; drop temp files of crashed writers.
  // A failed delete only keeps an old file a while longer (the next
  // snapshot retries), so it does not fail the snapshot.
  std::vector<std::string> names = ListSnapshots(env, dir);
  for (size_t i = std::max(keep, 1); i < names.size(); ++i) {
    env->DeleteFile((fs::path(dir) / names[i]).string()).IgnoreError();
  }
  for (const std::string& n : Children(env, dir)) {
    if (n.rfind(kPrefix, 0) == 0 && n.size() > 4 && n.compare(n.size() - 4, 4, kTempSuffix) == 0) {
      env->DeleteFile((fs::path(dir) / n).string()).IgnoreError();
    }
  }
  return final_path;
}

absl::StatusOr<LoadedSnapshot> ReadLatestSnapshot(const std::string& dir, Env* env) {
  for (const std::string& name : ListSnapshots(env, dir)) {
    std::string path = (fs::path(dir) / name).string();
    absl::StatusOr<LoadedSnapshot> loaded = ReadSnapshotFile(env, path);
    if (loaded.ok()) return loaded;
    spdlog::warn("skipping index snapshot {}: {}", path, loaded.status().ToString());
  }
  return absl::NotFoundError(absl::StrCat("no valid index snapshot in ", dir));
}

}  // namespace neodb::index
