#include "index/snapshot.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
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

absl::Status ErrnoStatus(std::string_view what, const std::string& path) {
  return absl::UnavailableError(
      absl::StrCat(std::string(what), " ", path, ": ", std::strerror(errno)));
}

absl::Status WriteFileDurably(const std::string& path, std::string_view a, std::string_view b) {
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return ErrnoStatus("cannot create", path);
  for (std::string_view part : {a, b}) {
    while (!part.empty()) {
      ssize_t n = ::write(fd, part.data(), part.size());
      if (n < 0) {
        if (errno == EINTR) continue;
        absl::Status s = ErrnoStatus("cannot write", path);
        ::close(fd);
        return s;
      }
      part.remove_prefix(static_cast<size_t>(n));
    }
  }
  if (::fsync(fd) != 0) {
    absl::Status s = ErrnoStatus("cannot fsync", path);
    ::close(fd);
    return s;
  }
  if (::close(fd) != 0) return ErrnoStatus("cannot close", path);
  return absl::OkStatus();
}

absl::Status FsyncDir(const std::string& dir) {
  int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return ErrnoStatus("cannot open directory", dir);
  int rc = ::fsync(fd);
  ::close(fd);
  if (rc != 0) return ErrnoStatus("cannot fsync directory", dir);
  return absl::OkStatus();
}

bool IsSnapshotName(const std::string& name) {
  return name.rfind(kPrefix, 0) == 0 && name.size() > std::strlen(kSuffix) &&
         name.compare(name.size() - std::strlen(kSuffix), std::string::npos, kSuffix) == 0;
}

// Snapshot file names in `dir`, newest first (names sort by covered seq, then time).
std::vector<std::string> ListSnapshots(const std::string& dir) {
  std::vector<std::string> names;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(dir, ec)) {
    std::string name = entry.path().filename().string();
    if (IsSnapshotName(name)) names.push_back(name);
  }
  std::sort(names.rbegin(), names.rend());
  return names;
}

absl::StatusOr<LoadedSnapshot> ReadSnapshotFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return absl::NotFoundError("cannot open");
  std::stringstream ss;
  ss << in.rdbuf();
  std::string bytes = ss.str();
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
                                          int keep) {
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) return absl::UnavailableError(absl::StrCat("cannot create ", dir, ": ", ec.message()));
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
  RETURN_IF_ERROR(WriteFileDurably(temp_path, header.out(), payload));
  if (::rename(temp_path.c_str(), final_path.c_str()) != 0) {
    return ErrnoStatus("cannot rename into", final_path);
  }
  RETURN_IF_ERROR(FsyncDir(dir));

  // Prune: keep the newest `keep` snapshots; drop temp files of crashed writers.
  std::vector<std::string> names = ListSnapshots(dir);
  for (size_t i = std::max(keep, 1); i < names.size(); ++i) {
    fs::remove(fs::path(dir) / names[i], ec);
  }
  for (const auto& entry : fs::directory_iterator(dir, ec)) {
    std::string n = entry.path().filename().string();
    if (n.rfind(kPrefix, 0) == 0 && n.size() > 4 && n.compare(n.size() - 4, 4, kTempSuffix) == 0) {
      fs::remove(entry.path(), ec);
    }
  }
  return final_path;
}

absl::StatusOr<LoadedSnapshot> ReadLatestSnapshot(const std::string& dir) {
  for (const std::string& name : ListSnapshots(dir)) {
    std::string path = (fs::path(dir) / name).string();
    absl::StatusOr<LoadedSnapshot> loaded = ReadSnapshotFile(path);
    if (loaded.ok()) return loaded;
    spdlog::warn("skipping index snapshot {}: {}", path, loaded.status().ToString());
  }
  return absl::NotFoundError(absl::StrCat("no valid index snapshot in ", dir));
}

}  // namespace neodb::index
