// Backups carry the index snapshots (engine/backup.h): a restore whose
// snapshots match its store starts from them (no rebuild, observed through
// the database's counters), one whose snapshots do not fit (older than the
// log the store kept, or newer than the store) rebuilds and is still
// correct, and VerifyBackup checks the snapshot files like every other.
#include <filesystem>
#include <fstream>

#include "absl/strings/str_cat.h"
#include "common/atomic_file.h"
#include "common/env_memory.h"
#include "engine/backup.h"
#include "engine/database.h"
#include "engine/fake_embedder.h"
#include "gtest/gtest.h"
#include "tests/engine/engine_test_util.h"

namespace neodb::engine {
namespace {

namespace fs = std::filesystem;
constexpr int kDim = 16;
const absl::Time kFar = absl::InfiniteFuture();

std::string Words(int i) { return absl::StrCat("w", i % 7, " x", i % 11, " y", i % 13, " z", i); }

class BackupSnapshotsTest : public EngineTest {
 protected:
  DatabaseOptions At(const fs::path& dir) {
    DatabaseOptions o = BaseOptions();
    o.data_dir = dir.string();
    o.snapshot_on_close = false;  // a restored start must not lean on a close snapshot
    return o;
  }
  void OpenAt(const fs::path& dir) {
    OpenWith(At(dir), std::make_unique<FakeEmbedder>(kDim, 32, 1));
  }
  void Put(int from, int to) {
    std::vector<DocumentInput> docs;
    for (int i = from; i < to; ++i) docs.push_back({absl::StrCat("d", i), Words(i), {}});
    auto r = db_->Upsert("c", std::move(docs), kFar);
    ASSERT_TRUE(r.ok()) << r.status();
  }
  fs::path Backup(const std::string& name) {
    const fs::path out = dir_ / name;
    auto m = db_->Backup(out.string());
    EXPECT_TRUE(m.ok()) << m.status();
    if (m.ok()) EXPECT_GT(m->snapshot_seq, 0u);
    return out;
  }
  fs::path Restore(const fs::path& from, const std::string& name) {
    const fs::path to = dir_ / name;
    absl::Status s = RestoreBackup(from.string(), to.string());
    EXPECT_TRUE(s.ok()) << s;
    return to;
  }
  // The restored database holds exactly `n` documents, findable, indexes clean.
  void ExpectCorrect(uint64_t n) {
    auto v = db_->Verify("c");
    ASSERT_TRUE(v.ok()) << v.status();
    EXPECT_EQ(v->stored, n);
    EXPECT_EQ(v->indexed, n);
    EXPECT_EQ(v->missing_from_index, 0u);
    EXPECT_EQ(v->stale_in_index, 0u);
    EXPECT_TRUE(v->keyword_content_matches);
    EXPECT_EQ(v->vectors.index_mismatches, 0u);
    SearchParams p;
    p.k = 1;
    p.mode = SearchMode::kVector;
    auto r = db_->NearText("c", Words(3), std::nullopt, p, kFar);
    ASSERT_TRUE(r.ok()) << r.status();
    ASSERT_EQ(r->hits.size(), 1u);
    EXPECT_EQ(r->hits[0].id, "d3");
  }
  // Rewrites `backup`'s manifest over what its directory now holds, as one
  // who can write the backup directory could.
  static void Reseal(const fs::path& backup) {
    std::ifstream in(backup / "manifest.json");
    std::stringstream ss;
    ss << in.rdbuf();
    auto m = ManifestFromJson(ss.str());
    ASSERT_TRUE(m.ok()) << m.status();
    fs::remove(backup / "manifest.json");
    auto files = DescribeFiles(backup.string());
    ASSERT_TRUE(files.ok()) << files.status();
    m->files = *files;
    std::ofstream(backup / "manifest.json") << ManifestToJson(*m);
  }
  void Start() {
    db::CollectionSpec spec;
    spec.name = "c";
    spec.index_spec = "HNSW16";
    OpenAt(dir_ / "live");
    ASSERT_TRUE(db_->CreateCollection(spec).ok());
  }
};

TEST_F(BackupSnapshotsTest, MatchingSnapshotsStartWithoutRebuilding) {
  Start();
  Put(0, 50);
  const fs::path b = Backup("b");
  ASSERT_TRUE(fs::exists(b / "snapshots" / "c"));
  ASSERT_TRUE(VerifyBackup(b.string()).ok());
  OpenAt(Restore(b, "restored"));
  DatabaseStats s = db_->Stats();
  EXPECT_EQ(s.snapshot_loads, 1u);
  EXPECT_EQ(s.index_rebuilds, 0u);
  EXPECT_EQ(s.keyword_rebuilds, 0u);
  ExpectCorrect(50);
}

TEST_F(BackupSnapshotsTest, SnapshotTamperedInBackupFailsVerification) {
  Start();
  Put(0, 20);
  const fs::path b = Backup("b");
  for (const auto& e : fs::recursive_directory_iterator(b / "snapshots")) {
    if (!e.is_regular_file()) continue;
    std::fstream f(e.path(), std::ios::in | std::ios::out | std::ios::binary);
    const auto at = static_cast<std::streamoff>(fs::file_size(e.path()) / 2);
    f.seekg(at);
    const char c = static_cast<char>(f.get());
    f.seekp(at);
    f.put(static_cast<char>(c ^ 0x5a));
    break;
  }
  auto v = VerifyBackup(b.string());
  EXPECT_EQ(v.status().code(), absl::StatusCode::kDataLoss);
  EXPECT_NE(v.status().message().find("snapshots/c/"), std::string::npos) << v.status();
  EXPECT_FALSE(RestoreBackup(b.string(), (dir_ / "r").string()).ok());
  EXPECT_FALSE(fs::exists(dir_ / "r"));
}

TEST_F(BackupSnapshotsTest, StaleSnapshotsRebuildAndStayCorrect) {
  Start();
  Put(0, 30);
  const fs::path old_backup = Backup("old");
  Put(30, 45);
  ASSERT_TRUE(db_->Delete("c", {"d0", "d1"}).ok());
  ASSERT_TRUE(db_->Snapshot().ok());  // trims the log the old snapshots would need
  const fs::path new_backup = Backup("new");
  db_.reset();
  // Each backup's store with the other's snapshots, resealed.
  fs::remove_all(dir_ / "mixed_a");
  fs::copy(new_backup, dir_ / "mixed_a", fs::copy_options::recursive);
  fs::remove_all(dir_ / "mixed_a" / "snapshots");
  fs::copy(old_backup / "snapshots", dir_ / "mixed_a" / "snapshots", fs::copy_options::recursive);
  Reseal(dir_ / "mixed_a");
  fs::copy(old_backup, dir_ / "mixed_b", fs::copy_options::recursive);
  fs::remove_all(dir_ / "mixed_b" / "snapshots");
  fs::copy(new_backup / "snapshots", dir_ / "mixed_b" / "snapshots", fs::copy_options::recursive);
  Reseal(dir_ / "mixed_b");
  // Older than the log the store kept: rebuilt.
  OpenAt(Restore(dir_ / "mixed_a", "ra"));
  EXPECT_EQ(db_->Stats().index_rebuilds, 1u);
  ExpectCorrect(43);
  // Newer than the store: not loaded, rebuilt.
  OpenAt(Restore(dir_ / "mixed_b", "rb"));
  EXPECT_EQ(db_->Stats().snapshot_loads, 0u);
  EXPECT_EQ(db_->Stats().index_rebuilds, 1u);
  ExpectCorrect(30);
}

// A backup is described and verified through the Env it is given: a memory
// Env serves the manifest and the files with no file on disk.
TEST(BackupEnvTest, DescribeAndVerifyReadThroughTheEnv) {
  std::unique_ptr<Env> env = NewMemEnv();
  ASSERT_TRUE(env->CreateDir("/b/store").ok());
  ASSERT_TRUE(env->CreateDir("/b/snapshots").ok());
  ASSERT_TRUE(WriteFileAtomically(env.get(), "/b/store/CURRENT", {"MANIFEST-1\n"}).ok());
  ASSERT_TRUE(WriteFileAtomically(env.get(), "/b/snapshots/c.idx", {"index bytes"}).ok());
  BackupManifest m;
  m.covered_seq = 7;
  auto files = DescribeFiles("/b", env.get());
  ASSERT_TRUE(files.ok()) << files.status();
  ASSERT_EQ(files->size(), 2u);
  EXPECT_EQ((*files)[0].path, "snapshots/c.idx");
  EXPECT_EQ((*files)[1].path, "store/CURRENT");
  EXPECT_EQ((*files)[1].size, 11u);
  m.files = *files;

  EXPECT_EQ(VerifyBackup("/b", env.get()).status().message(),
            "/b has no manifest.json: not a complete backup (was it interrupted?)");
  ASSERT_TRUE(WriteFileAtomically(env.get(), "/b/manifest.json", {ManifestToJson(m)}).ok());
  auto verified = VerifyBackup("/b", env.get());
  ASSERT_TRUE(verified.ok()) << verified.status();
  EXPECT_EQ(verified->covered_seq, 7u);
  EXPECT_FALSE(VerifyBackup("/b").ok());  // not on disk

  // Altered in place, same size: the checksum read through the Env sees it.
  ASSERT_TRUE(WriteFileAtomically(env.get(), "/b/store/CURRENT", {"MANIFEST-2\n"}).ok());
  EXPECT_EQ(VerifyBackup("/b", env.get()).status().message(),
            "backup file store/CURRENT fails its SHA-256 check (corrupted)");
}

}  // namespace
}  // namespace neodb::engine
