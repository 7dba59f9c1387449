// A database that starts on a full disk (issue 49): it opens read-only, so
// reads, counts, lists and searches work from every acknowledged write, and
// every write is refused with RESOURCE_EXHAUSTED naming the data directory's
// disk; once space returns it takes writes again without a restart. Twice:
// after a clean stop, and after a "kill -9" (the Database dropped without a
// snapshot while the disk is full, so the last writes live only in RocksDB's
// WAL and the reopen must replay it without writing anything).
//
// The full disk is the FaultInjector's (common/fault_injector.h): every file
// write of the data directory, RocksDB's (db/fault_file_system.h) and ours,
// fails with ENOSPC and the file system reports no free space.
#include <filesystem>
#include <map>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "engine/database.h"
#include "engine/fake_embedder.h"
#include "common/fault_injector.h"
#include "gtest/gtest.h"

namespace neodb::engine {
namespace {

namespace fs = std::filesystem;
constexpr int kDim = 8;
const absl::Time kFar = absl::InfiniteFuture();

class FullDiskStartupTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           absl::StrCat("neodb_full_disk_",
                        ::testing::UnitTest::GetInstance()->current_test_info()->name(), "_",
                        getpid());
    fs::remove_all(dir_);
  }
  void TearDown() override {
    faults_.Reset();
    db_.reset();
    fs::remove_all(dir_);
  }

  absl::Status Open() {
    db_.reset();
    DatabaseOptions o;
    o.data_dir = dir_.string();
    o.snapshot_interval = absl::ZeroDuration();
    o.snapshot_on_close = false;  // every reopen replays the change log
    o.test_faults = &faults_;
    o.embedder_factory = [](const std::string&, encoder::Precision)
        -> absl::StatusOr<std::unique_ptr<Embedder>> {
      return std::unique_ptr<Embedder>(new FakeEmbedder(kDim, 32, 7));
    };
    auto db = Database::Open(o, std::make_unique<FakeEmbedder>(kDim, 32, 1));
    if (!db.ok()) return db.status();
    db_ = std::move(*db);
    return absl::OkStatus();
  }
  void Create(const std::string& name) {
    db::CollectionSpec spec;
    spec.name = name;
    spec.index_spec = "HNSW16";
    ASSERT_TRUE(db_->CreateCollection(spec).ok());
  }
  absl::Status Add(int n) {
    std::vector<DocumentInput> docs;
    for (int i = 0; i < n; ++i) {
      const std::string id = absl::StrCat("d", next_++);
      DocumentInput d;
      d.id = id;
      d.text = absl::StrCat("text of ", id, " word", next_ % 5);
      docs.push_back(std::move(d));
    }
    std::vector<DocumentInput> copy = docs;
    auto r = db_->Upsert("c", std::move(copy), kFar);
    if (r.ok()) {
      for (auto& d : docs) acked_[d.id] = d.text;
    }
    return r.status();
  }
  // Every acknowledged document is there, searchable; the deleted one is not.
  void CheckReads() {
    std::vector<std::string> ids;
    for (auto& [id, text] : acked_) ids.push_back(id);
    ids.push_back(deleted_);
    auto got = db_->Get("c", ids);
    ASSERT_TRUE(got.ok()) << got.status();
    for (size_t i = 0; i + 1 < ids.size(); ++i) {
      ASSERT_TRUE((*got)[i].has_value()) << "acknowledged " << ids[i] << " lost";
      EXPECT_EQ((*got)[i]->text, acked_[ids[i]]);
    }
    EXPECT_FALSE(got->back().has_value()) << "deleted " << deleted_ << " came back";
    auto count = db_->Count("c", nullptr);
    ASSERT_TRUE(count.ok()) << count.status();
    EXPECT_EQ(*count, acked_.size());
    auto list = db_->List("c", "", 1000);
    ASSERT_TRUE(list.ok()) << list.status();
    EXPECT_EQ(list->documents.size(), acked_.size());
    auto described = db_->DescribeCollection("c");
    ASSERT_TRUE(described.ok()) << described.status();
    EXPECT_EQ(described->index_size, acked_.size());
    for (SearchMode mode : {SearchMode::kKeyword, SearchMode::kVector, SearchMode::kHybrid}) {
      SearchParams p;
      p.k = 1;
      p.mode = mode;
      const auto& [id, text] = *acked_.rbegin();
      auto r = db_->NearText("c", text, std::nullopt, p, kFar);
      ASSERT_TRUE(r.ok()) << r.status();
      ASSERT_EQ(r->hits.size(), 1u);
      EXPECT_EQ(r->hits[0].id, id);
    }
    auto v = db_->Verify("c");
    ASSERT_TRUE(v.ok()) << v.status();
    EXPECT_EQ(v->stored, acked_.size());
    EXPECT_EQ(v->stored, v->indexed);
    EXPECT_EQ(v->missing_from_index + v->stale_in_index, 0u);
  }
  // RESOURCE_EXHAUSTED, and the message names the data directory's disk.
  void ExpectRefused(const absl::Status& s, const std::string& what) {
    EXPECT_TRUE(absl::IsResourceExhausted(s)) << what << ": " << s;
    EXPECT_TRUE(absl::StrContains(s.message(), dir_.string())) << what << ": " << s;
    EXPECT_TRUE(absl::StrContains(s.message(), "disk")) << what << ": " << s;
  }
  // Every kind of write is refused, and none of them changes anything.
  void CheckWritesRefused() {
    ExpectRefused(db_->WriteState(), "write state");
    EXPECT_FALSE(db_->Stats().read_only_reason.empty());
    ExpectRefused(Add(1), "upsert");
    ExpectRefused(db_->Delete("c", {acked_.begin()->first}).status(), "delete");
    DocumentSelection which;
    which.ids = {acked_.begin()->first};
    MetadataPatch patch;
    patch.metadata["tag"] = std::string("x");
    ExpectRefused(db_->UpdateMetadata("c", which, patch).status(), "update metadata");
    db::CollectionSpec spec;
    spec.name = "other";
    ExpectRefused(db_->CreateCollection(spec).status(), "create collection");
    ExpectRefused(db_->DropCollection("c"), "drop collection");
    ExpectRefused(db_->SetDefaultFusion("c", "rrf", 0.5).status(), "set fusion");
    ExpectRefused(db_->Reindex("c", ""), "reindex");
    const std::string backup = (dir_ / "backup").string();
    ExpectRefused(db_->Backup(backup).status(), "backup");
    EXPECT_FALSE(fs::exists(backup));
  }
  // Space is back: writes of every kind work, and survive a reopen.
  void CheckWritesWork() {
    ASSERT_TRUE(db_->WriteState().ok()) << db_->WriteState();
    EXPECT_TRUE(db_->Stats().read_only_reason.empty());
    absl::Status added = Add(3);
    ASSERT_TRUE(added.ok()) << added;
    auto gone = db_->Delete("c", {acked_.begin()->first});
    ASSERT_TRUE(gone.ok()) << gone.status();
    EXPECT_EQ(*gone, 1u);
    deleted_ = acked_.begin()->first;
    acked_.erase(acked_.begin());
    db::CollectionSpec spec;
    spec.name = "other";
    ASSERT_TRUE(db_->CreateCollection(spec).ok());
    ASSERT_TRUE(db_->DropCollection("other").ok());
    CheckReads();
    ASSERT_TRUE(Open().ok());
    CheckReads();
  }

  fs::path dir_;
  FaultInjector faults_;
  std::unique_ptr<Database> db_;
  int next_ = 0;
  std::map<std::string, std::string> acked_;
  std::string deleted_;
};

// A full disk at startup after a clean stop: read-only, then writable again
// on the next write once space returns.
TEST_F(FullDiskStartupTest, StartsReadOnlyAndTheNextWriteReopensWritable) {
  ASSERT_TRUE(Open().ok());
  Create("c");
  ASSERT_TRUE(Add(20).ok());
  deleted_ = "d3";
  ASSERT_TRUE(db_->Delete("c", {deleted_}).ok());
  acked_.erase(deleted_);
  ASSERT_TRUE(db_->Close().ok());
  db_.reset();

  faults_.SetDiskFull(true);
  absl::Status opened = Open();
  ASSERT_TRUE(opened.ok()) << "a full disk kept the database from opening: " << opened;
  CheckReads();
  CheckWritesRefused();
  CheckReads();  // the refused writes changed nothing

  faults_.SetDiskFull(false);
  // No wait: the write itself reopens the store.
  absl::Status added = Add(1);
  ASSERT_TRUE(added.ok()) << added;
  CheckWritesWork();
}

// A kill -9 while the disk is full: the last acknowledged writes are only in
// RocksDB's WAL (no flush, no index snapshot). The restart on the still-full
// disk must serve them read-only; the maintenance thread's probe makes the
// database writable again once space returns, with no client write.
TEST_F(FullDiskStartupTest, AfterAKillOnAFullDiskServesReadsThenResumes) {
  ASSERT_TRUE(Open().ok());
  Create("c");
  ASSERT_TRUE(Add(15).ok());
  deleted_ = "d4";
  ASSERT_TRUE(db_->Delete("c", {deleted_}).ok());
  acked_.erase(deleted_);
  ASSERT_TRUE(Add(5).ok());
  faults_.SetDiskFull(true);
  absl::Status refused = Add(2);  // the disk filled while serving
  EXPECT_TRUE(absl::IsResourceExhausted(refused)) << refused;
  // "kill -9": no snapshot, no flush can land (the disk is full).
  db_.reset();

  absl::Status opened = Open();
  ASSERT_TRUE(opened.ok()) << "a full disk kept the database from restarting: " << opened;
  CheckReads();
  CheckWritesRefused();
  // A refused write's outcome is never "applied": still the same documents.
  CheckReads();

  faults_.SetDiskFull(false);
  // The maintenance thread probes every 0.5 s; wait for it (bounded, not timed).
  const absl::Time give_up = absl::Now() + absl::Seconds(60);
  while (!db_->WriteState().ok() && absl::Now() < give_up) absl::SleepFor(absl::Milliseconds(50));
  CheckWritesWork();
}

// A kill -9 on a full disk, twice in a row: the read-only start wrote nothing,
// so a second start on the same full disk finds the same state.
TEST_F(FullDiskStartupTest, ARestartWhileReadOnlyLosesNothing) {
  ASSERT_TRUE(Open().ok());
  Create("c");
  ASSERT_TRUE(Add(12).ok());
  deleted_ = "d0";
  ASSERT_TRUE(db_->Delete("c", {deleted_}).ok());
  acked_.erase(deleted_);
  faults_.SetDiskFull(true);
  db_.reset();
  for (int start = 0; start < 2; ++start) {
    SCOPED_TRACE(absl::StrCat("start ", start));
    ASSERT_TRUE(Open().ok());
    CheckReads();
    ExpectRefused(Add(1), "upsert");
    db_.reset();
  }
  faults_.SetDiskFull(false);
  ASSERT_TRUE(Open().ok());
  CheckWritesWork();
}

}  // namespace
}  // namespace neodb::engine
