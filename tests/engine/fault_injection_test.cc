// Fault injection through the Env twin (common/fault_env.h) and the RocksDB
// fault file system (db/fault_file_system.h), one FaultInjector for both.
// Each test first runs an operation cleanly to count its file writes, then
// reruns it failing write 1, 2, ... n (EIO, ENOSPC, a torn rename): the
// operation reports an error (or, for a torn rename, succeeds and the torn
// file is caught when read back), the process stays up, and after a reopen
// every acknowledged document is there, searchable, deleted ones stay
// deleted, and the indexes match the store. Then a full disk: writes fail
// with RESOURCE_EXHAUSTED, reads keep working, writes resume with space.
// Restores and the model copies of a backup too: every write point fails
// with an error, leaves nothing that passes for a data directory or a
// backup, and the process goes on.
#include <filesystem>
#include <fstream>
#include <map>
#include <set>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "engine/backup.h"
#include "engine/database.h"
#include "engine/fake_embedder.h"
#include "common/fault_env.h"
#include "common/fault_injector.h"
#include "gtest/gtest.h"

namespace neodb::engine {
namespace {

namespace fs = std::filesystem;
constexpr int kDim = 8;
const absl::Time kFar = absl::InfiniteFuture();

// The faults cycled through write points: every kind meets every point
// over the run (kinds that make no sense for an op degrade to EIO).
Fault FaultFor(uint64_t n) {
  static const Fault kinds[] = {Fault::kIoError, Fault::kNoSpace, Fault::kTornRename};
  return kinds[n % 3];
}

class FaultInjectionTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           absl::StrCat("neodb_fault_",
                        ::testing::UnitTest::GetInstance()->current_test_info()->name(), "_",
                        getpid());
    fs::remove_all(dir_);
  }
  void TearDown() override {
    db_.reset();
    fs::remove_all(dir_);
  }

  void Open() {
    db_.reset();
    DatabaseOptions o;
    o.data_dir = dir_.string();
    o.sync_writes = true;  // the WAL sync is a write point too
    o.snapshot_interval = absl::ZeroDuration();
    o.snapshot_on_close = false;  // a reopen stands in for a crash
    o.test_faults = &faults_;
    o.embedder_factory = ModelFactory;
    auto db = Database::Open(o, std::make_unique<FakeEmbedder>(kDim, 32, 1));
    ASSERT_TRUE(db.ok()) << db.status();
    db_ = std::move(*db);
  }
  // A model directory holds a file "seed" (the fake's seed: a checkpoint a
  // backup copies); any other name is the seed itself.
  static absl::StatusOr<std::unique_ptr<Embedder>> ModelFactory(const std::string& d,
                                                                encoder::Precision) {
    uint64_t seed = 0;
    if (std::ifstream in(fs::path(d) / "seed"); in) {
      in >> seed;
    } else {
      seed = std::stoull(d);
    }
    return std::unique_ptr<Embedder>(new FakeEmbedder(kDim, 32, seed));
  }
  // Moves collection "c" onto a model directory with files in it (what a
  // backup copies), in a subdirectory too.
  void MoveToModelDirectory() {
    const fs::path model = dir_ / "model3";
    fs::create_directories(model / "weights");
    std::ofstream(model / "seed") << 3;
    std::ofstream(model / "weights" / "layer0.bin") << std::string(10000, 'w');
    ASSERT_TRUE(db_->Reindex("c", model.string()).ok());
    db_->WaitForReindex();
    ASSERT_EQ(db_->GetReindexProgress("c")->state, ReindexProgress::State::kDone);
  }
  // Opens the restored data directory `data_dir` on its own (no faults) and
  // checks it holds `docs` (what the backup held), on the model copy.
  void CheckRestored(const std::string& data_dir, const std::map<std::string, std::string>& docs) {
    DatabaseOptions o;
    o.data_dir = data_dir;
    o.snapshot_on_close = false;
    o.embedder_factory = ModelFactory;
    auto db = Database::Open(o, std::make_unique<FakeEmbedder>(kDim, 32, 1));
    ASSERT_TRUE(db.ok()) << db.status();
    auto spec = (*db)->DescribeCollection("c");
    ASSERT_TRUE(spec.ok());
    EXPECT_EQ(spec->spec.model_dir, (fs::path(data_dir) / "models" / "0").string());
    EXPECT_EQ(spec->count, docs.size());
    std::vector<std::string> ids;
    for (auto& [id, text] : docs) ids.push_back(id);
    auto got = (*db)->Get("c", ids);
    ASSERT_TRUE(got.ok());
    for (size_t i = 0; i < ids.size(); ++i) {
      ASSERT_TRUE((*got)[i].has_value()) << ids[i];
      EXPECT_EQ((*got)[i]->text, docs.at(ids[i]));
    }
    auto v = (*db)->Verify("c");
    ASSERT_TRUE(v.ok()) << v.status();
    EXPECT_EQ(v->stored, v->indexed);
    EXPECT_EQ(v->foreign_model, 0u);
    SearchParams p;
    p.k = 1;
    auto r = (*db)->NearText("c", docs.begin()->second, std::nullopt, p, kFar);
    ASSERT_TRUE(r.ok()) << r.status();
    ASSERT_EQ(r->hits.size(), 1u);
    EXPECT_EQ(r->hits[0].id, docs.begin()->first);
  }
  // Entries of `dir` whose name contains `part` (a restore's leftovers).
  static std::vector<std::string> Leftovers(const fs::path& dir, const std::string& part) {
    std::vector<std::string> out;
    for (const auto& e : fs::directory_iterator(dir)) {
      if (e.path().filename().string().find(part) != std::string::npos) {
        out.push_back(e.path().filename().string());
      }
    }
    return out;
  }
  void Create() {
    db::CollectionSpec spec;
    spec.name = "c";
    spec.index_spec = "HNSW16";
    ASSERT_TRUE(db_->CreateCollection(spec).ok());
  }
  // Upserts `n` new documents; records them when acknowledged.
  absl::Status Add(int n) {
    std::vector<DocumentInput> docs;
    for (int i = 0; i < n; ++i) {
      const std::string id = absl::StrCat("d", next_++);
      docs.push_back({id, absl::StrCat("text of ", id, " w", next_ % 7), {}, std::nullopt});
    }
    std::vector<DocumentInput> copy = docs;
    auto r = db_->Upsert("c", std::move(copy), kFar);
    if (r.ok()) {
      for (auto& d : docs) acked_[d.id] = d.text;
    }
    return r.status();
  }
  absl::Status DeleteOne() {
    if (acked_.empty()) return absl::OkStatus();
    const std::string id = acked_.begin()->first;
    auto r = db_->Delete("c", {id});
    // A failed delete's outcome is unknown (its WAL record may have reached
    // the file before the sync failed, and then a restart replays it): the
    // document is checked no more.
    acked_.erase(id);
    if (r.ok()) deleted_.insert(id);
    return r.status();
  }
  // Reopens without faults and checks every acknowledged write.
  void ReopenAndCheck() {
    faults_.Reset();
    Open();
    ASSERT_NE(db_, nullptr);
    std::vector<std::string> ids;
    for (auto& [id, text] : acked_) ids.push_back(id);
    for (auto& id : deleted_) ids.push_back(id);
    auto got = db_->Get("c", ids);
    ASSERT_TRUE(got.ok()) << got.status();
    for (size_t i = 0; i < ids.size(); ++i) {
      if (i < acked_.size()) {
        ASSERT_TRUE((*got)[i].has_value()) << "acknowledged " << ids[i] << " lost";
        EXPECT_EQ((*got)[i]->text, acked_[ids[i]]);
      } else {
        EXPECT_FALSE((*got)[i].has_value()) << "deleted " << ids[i] << " came back";
      }
    }
    auto v = db_->Verify("c");
    ASSERT_TRUE(v.ok()) << v.status();
    EXPECT_GE(v->stored, acked_.size());
    EXPECT_EQ(v->stored, v->indexed);
    EXPECT_EQ(v->missing_from_index, 0u);
    EXPECT_EQ(v->stale_in_index, 0u);
    EXPECT_EQ(v->foreign_model, 0u);
    EXPECT_TRUE(v->keyword_content_matches);
    // Searchable: the newest acknowledged document is found by its text.
    if (!acked_.empty()) {
      SearchParams p;
      p.k = 1;
      p.mode = SearchMode::kKeyword;
      const auto& [id, text] = *acked_.rbegin();
      auto r = db_->NearText("c", text, std::nullopt, p, kFar);
      ASSERT_TRUE(r.ok()) << r.status();
      ASSERT_EQ(r->hits.size(), 1u);
    }
  }

  fs::path dir_;
  FaultInjector faults_;
  std::unique_ptr<Database> db_;
  int next_ = 0;
  std::map<std::string, std::string> acked_;
  std::set<std::string> deleted_;
};

TEST_F(FaultInjectionTest, EveryWritePointOfIngest) {
  Open();
  Create();
  ASSERT_TRUE(Add(5).ok());
  faults_.Reset();
  ASSERT_TRUE(Add(3).ok());
  ASSERT_TRUE(DeleteOne().ok());
  const uint64_t points = faults_.ops();
  ASSERT_GE(points, 4u);  // at least WAL append + sync, twice
  for (uint64_t n = 1; n <= points; ++n) {
    SCOPED_TRACE(absl::StrCat("write point ", n, " of ", points));
    faults_.FailNth(n, FaultFor(n));
    absl::Status a = Add(3);
    absl::Status d = DeleteOne();
    ASSERT_EQ(faults_.injected(), 1u);
    // A fault in a write's own WAL append or sync fails that write. (RocksDB
    // may also flush in the background; a fault there fails the flush, and
    // the reopen below checks that nothing was lost either way.)
    const std::string path = faults_.last_injected_path();
    const FileOp op = faults_.last_injected_op();
    if (absl::EndsWith(path, ".log") && (op == FileOp::kAppend || op == FileOp::kSync)) {
      EXPECT_FALSE(a.ok() && d.ok()) << "an injected fault went unreported: " << path;
    }
    for (const absl::Status& s : {a, d}) {
      if (!s.ok()) {
        EXPECT_TRUE(absl::IsResourceExhausted(s) || absl::IsUnavailable(s)) << s;
      }
    }
    ReopenAndCheck();
    // Writes work again after the reopen.
    absl::Status again = Add(1);
    ASSERT_TRUE(again.ok()) << again;
  }
}

TEST_F(FaultInjectionTest, EveryWritePointOfSnapshot) {
  Open();
  Create();
  ASSERT_TRUE(Add(20).ok());
  faults_.Reset();
  ASSERT_TRUE(db_->Snapshot().ok());
  const uint64_t points = faults_.ops();
  ASSERT_GE(points, 8u);  // two snapshot files: create, append, sync, rename, dir sync ...
  for (uint64_t n = 1; n <= points; ++n) {
    SCOPED_TRACE(absl::StrCat("write point ", n, " of ", points));
    ASSERT_TRUE(Add(2).ok());
    faults_.FailNth(n, FaultFor(n));
    auto s = db_->Snapshot();
    ASSERT_EQ(faults_.injected(), 1u);
    // A fault in a snapshot file or in the change-log trim's WAL record
    // fails the snapshot, except a torn rename (it reports success: the disk
    // lied, and the reopen must notice the torn file) and a failed delete of
    // an old snapshot (the next snapshot prunes it). RocksDB's background
    // flushes are not the snapshot's; the reopen checks them.
    const FileOp op = faults_.last_injected_op();
    const std::string path = faults_.last_injected_path();
    const bool own =
        absl::StrContains(path, "/snapshots/") ||
        (absl::EndsWith(path, ".log") && (op == FileOp::kAppend || op == FileOp::kSync));
    if (own && FaultFor(n) != Fault::kTornRename && op != FileOp::kDelete) {
      EXPECT_FALSE(s.ok()) << "an injected fault went unreported: " << path;
    }
    // The process stays up and writes go on, except where RocksDB judged
    // the failure fatal (a MANIFEST write): then writes say so until a
    // restart, and the restart below brings them back with nothing lost.
    faults_.Reset();
    absl::Status after = Add(1);
    if (!after.ok()) {
      EXPECT_TRUE(absl::StrContains(after.message(), "stopped writing")) << after;
    }
    ReopenAndCheck();
  }
}

TEST_F(FaultInjectionTest, EveryWritePointOfReindex) {
  // Counts the write points of one reindex on a fresh database.
  auto run = [&](uint64_t fail_at) -> ReindexProgress {
    db_.reset();
    fs::remove_all(dir_);
    acked_.clear();
    deleted_.clear();
    next_ = 0;
    faults_.Reset();
    Open();
    Create();
    EXPECT_TRUE(Add(12).ok());
    if (fail_at == 0) {
      faults_.Reset();
    } else {
      faults_.FailNth(fail_at, FaultFor(fail_at));
    }
    absl::Status started = db_->Reindex("c", "2");
    db_->WaitForReindex();
    ReindexProgress p;
    if (!started.ok()) {
      p.state = ReindexProgress::State::kFailed;
      p.error = std::string(started.message());
    } else {
      p = *db_->GetReindexProgress("c");
    }
    return p;
  };
  ReindexProgress clean = run(0);
  ASSERT_EQ(clean.state, ReindexProgress::State::kDone) << clean.error;
  const uint64_t points = faults_.ops();
  ASSERT_GE(points, 4u);
  for (uint64_t n = 1; n <= points; ++n) {
    SCOPED_TRACE(absl::StrCat("write point ", n, " of ", points));
    ReindexProgress p = run(n);
    EXPECT_EQ(faults_.injected(), 1u);
    // Whatever happened, the collection is whole on one model after a reopen
    // (ReopenAndCheck: foreign_model == 0, every acknowledged document).
    ReopenAndCheck();
  }
}

TEST_F(FaultInjectionTest, AFullDiskRefusesWritesKeepsReadsAndResumes) {
  Open();
  Create();
  ASSERT_TRUE(Add(10).ok());
  faults_.SetDiskFull(true);
  for (int i = 0; i < 3; ++i) {
    absl::Status s = Add(2);
    ASSERT_TRUE(absl::IsResourceExhausted(s)) << s;
  }
  EXPECT_TRUE(absl::IsResourceExhausted(db_->Snapshot().status()));
  // A backup fails the same way and leaves nothing behind.
  const std::string backup = (dir_ / "backup").string();
  auto b = db_->Backup(backup);
  EXPECT_TRUE(absl::IsResourceExhausted(b.status())) << b.status();
  EXPECT_FALSE(fs::exists(backup));
  // Reads keep working.
  auto got = db_->Get("c", {"d0", "d9"});
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_TRUE((*got)[0].has_value() && (*got)[1].has_value());
  SearchParams p;
  p.k = 3;
  auto r = db_->NearText("c", acked_["d3"], std::nullopt, p, kFar);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_FALSE(r->hits.empty());
  // Space comes back: the next write succeeds, without a restart.
  faults_.SetDiskFull(false);
  absl::Status resumed = Add(2);
  ASSERT_TRUE(resumed.ok()) << resumed;
  ASSERT_TRUE(db_->Backup(backup).ok());
  ASSERT_TRUE(db_->Snapshot().ok());
  ReopenAndCheck();
}

TEST_F(FaultInjectionTest, EveryWritePointOfABackupsModelCopy) {
  Open();
  Create();
  ASSERT_TRUE(Add(10).ok());
  MoveToModelDirectory();
  // Only the model copies count: the backup's models/ directory.
  faults_.Reset();
  faults_.SetPathFilter("/models/");
  ASSERT_TRUE(db_->Backup((dir_ / "b0").string()).ok());
  const uint64_t points = faults_.ops();
  ASSERT_GE(points, 8u);  // two directories, two files: mkdir, create, append, sync, dir syncs
  for (uint64_t n = 1; n <= points; ++n) {
    SCOPED_TRACE(absl::StrCat("write point ", n, " of ", points));
    const std::string backup = (dir_ / absl::StrCat("b", n)).string();
    faults_.FailNth(n, FaultFor(n));
    auto b = db_->Backup(backup);
    ASSERT_EQ(faults_.injected(), 1u);
    // Nothing in a model copy renames, so a torn rename is an error too.
    EXPECT_FALSE(b.ok()) << "an injected fault went unreported: " << faults_.last_injected_path();
    EXPECT_TRUE(absl::IsResourceExhausted(b.status()) || absl::IsUnavailable(b.status()))
        << b.status();
    EXPECT_FALSE(fs::exists(backup)) << "a failed backup was left behind";
    // The process goes on: writes, and the next backup.
    faults_.Reset();
    faults_.SetPathFilter("/models/");
    ASSERT_TRUE(Add(1).ok());
  }
  faults_.SetPathFilter("");
  ASSERT_TRUE(db_->Backup((dir_ / "b_last").string()).ok());
  auto m = VerifyBackup((dir_ / "b_last").string());
  ASSERT_TRUE(m.ok()) << m.status();
  ASSERT_EQ(m->models.size(), 1u);
  ReopenAndCheck();
}

TEST_F(FaultInjectionTest, EveryWritePointOfRestore) {
  Open();
  Create();
  ASSERT_TRUE(Add(20).ok());
  MoveToModelDirectory();
  const std::string backup = (dir_ / "backup").string();
  ASSERT_TRUE(db_->Backup(backup).ok());
  const std::map<std::string, std::string> in_backup = acked_;
  // Restores go under restores/, and only their writes count (the path
  // filter): the open database's own writes must not take the fault.
  const fs::path restores = dir_ / "restores";
  fs::create_directories(restores);
  FaultInjectionEnv env(Env::Default(), &faults_);
  RestoreOptions ro;
  ro.env = &env;
  ro.test_faults = &faults_;
  faults_.Reset();
  faults_.SetPathFilter("restores");
  ASSERT_TRUE(RestoreBackup(backup, (restores / "r0").string(), ro).ok());
  const uint64_t points = faults_.ops();
  ASSERT_GE(points, 20u);  // every file copied (create, append, sync), the store, dir syncs, rename
  CheckRestored((restores / "r0").string(), in_backup);
  int reported_ok = 0;
  for (uint64_t n = 1; n <= points; ++n) {
    SCOPED_TRACE(absl::StrCat("write point ", n, " of ", points));
    const std::string target = (restores / absl::StrCat("r", n)).string();
    faults_.FailNth(n, FaultFor(n));
    absl::Status s = RestoreBackup(backup, target, ro);
    ASSERT_EQ(faults_.injected(), 1u);
    faults_.Reset();  // keeps the path filter
    if (s.ok()) {
      // Only a fault the restore cannot see (a torn rename of a directory is
      // a plain rename; RocksDB may absorb one in the background) lets it
      // report success: then the directory must be whole.
      ++reported_ok;
      CheckRestored(target, in_backup);
    } else {
      EXPECT_TRUE(absl::IsResourceExhausted(s) || absl::IsUnavailable(s) || absl::IsDataLoss(s) ||
                  absl::IsInternal(s) || absl::IsNotFound(s))
          << s;
      EXPECT_FALSE(fs::exists(target)) << "a failed restore left " << target << ": " << s;
      EXPECT_TRUE(Leftovers(restores, absl::StrCat(".r", n, ".restore-")).empty())
          << "a failed restore left its temporary directory: " << s;
    }
    // The process goes on: the database serves and takes writes.
    ASSERT_TRUE(Add(1).ok());
  }
  EXPECT_LT(reported_ok, static_cast<int>(points) / 4);
  ReopenAndCheck();
}

}  // namespace
}  // namespace neodb::engine
