// Store on a full disk at open (issue 49): it opens read-only from the WAL
// left by a crash, serves every read, refuses every mutation with
// RESOURCE_EXHAUSTED naming the directory, and reopens writable once the
// disk has room, while readers run, continuing ids and the change log.
// The full disk is the FaultInjector's (db/fault_file_system.h).
#include <gtest/gtest.h>

#include <atomic>
#include <filesystem>
#include <thread>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "common/fault_injector.h"
#include "db/store.h"

namespace neodb::db {
namespace {

namespace fs = std::filesystem;

class StoreReadOnlyTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           absl::StrCat("neodb_store_ro_test_", ::getpid(), "_",
                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
  }
  void TearDown() override {
    faults_.Reset();
    store_.reset();
    fs::remove_all(dir_);
  }
  absl::Status Open() {
    store_.reset();
    StoreOptions o;
    o.test_faults = &faults_;
    auto s = Store::Open(dir_.string(), o);
    if (!s.ok()) return s.status();
    store_ = std::move(*s);
    return absl::OkStatus();
  }
  static Document Doc(std::string id) {
    std::string text = absl::StrCat("text of ", id);
    return Document{std::move(id), std::move(text), {}, {1, 2, 3}, "m", 0};
  }
  void ExpectRefused(const absl::Status& s, const char* what) {
    EXPECT_TRUE(absl::IsResourceExhausted(s)) << what << ": " << s;
    EXPECT_TRUE(absl::StrContains(s.message(), dir_.string())) << what << ": " << s;
  }

  fs::path dir_;
  FaultInjector faults_;
  std::unique_ptr<Store> store_;
};

TEST_F(StoreReadOnlyTest, OpensReadOnlyOnAFullDiskAndReopensWritableUnderReaders) {
  ASSERT_TRUE(Open().ok());
  CollectionSpec spec;
  spec.name = "c";
  spec.dimension = 3;
  ASSERT_TRUE(store_->CreateCollection(spec).ok());
  std::vector<Document> docs;
  for (int i = 0; i < 50; ++i) docs.push_back(Doc(absl::StrCat("d", i)));
  ASSERT_TRUE(store_->Upsert("c", docs).ok());
  const uint64_t seq = store_->LastSequence();
  const uint64_t last_id = store_->Get("c", "d49")->internal_id;
  // A crash: the writes are in the WAL only (no flush on the way out).
  faults_.SetDiskFull(true);
  store_.reset();

  absl::Status opened = Open();
  ASSERT_TRUE(opened.ok()) << opened;
  EXPECT_TRUE(store_->read_only());
  ExpectRefused(store_->WriteState(), "write state");
  EXPECT_EQ(store_->LastSequence(), seq);
  EXPECT_EQ(*store_->Count("c"), 50u);
  EXPECT_EQ(store_->Get("c", "d7")->text, "text of d7");
  EXPECT_EQ(store_->List("c", "", 100)->documents.size(), 50u);
  uint64_t scanned = 0;
  ASSERT_TRUE(store_->ScanDocuments("c", [&](const Document&) {
    ++scanned;
    return absl::OkStatus();
  }).ok());
  EXPECT_EQ(scanned, 50u);
  ExpectRefused(store_->Upsert("c", {Doc("x")}).status(), "upsert");
  ExpectRefused(store_->Delete("c", std::vector<std::string>{"d1"}).status(), "delete");
  CollectionSpec other = spec;
  other.name = "other";
  ExpectRefused(store_->CreateCollection(other), "create");
  ExpectRefused(store_->DropCollection("c"), "drop");
  CollectionUpdate update;
  update.fusion = "rrf";
  ExpectRefused(store_->UpdateCollection("c", update).status(), "update");
  ExpectRefused(store_->TrimChangelog(seq), "trim");
  ExpectRefused(store_->CreateCheckpoint((dir_ / "cp").string()), "checkpoint");
  ExpectRefused(store_->Compact(), "compact");
  EXPECT_TRUE(store_->Flush().ok());  // nothing of its own to flush
  ExpectRefused(store_->TryReopenWritable(), "reopen while full");
  EXPECT_TRUE(store_->read_only());
  EXPECT_EQ(*store_->Count("c"), 50u);

  // Space returns while readers run: the swap never fails a read.
  faults_.SetDiskFull(false);
  std::atomic<bool> stop{false};
  std::atomic<uint64_t> reads{0}, failures{0};
  std::vector<std::thread> readers;
  for (int t = 0; t < 2; ++t) {
    readers.emplace_back([&, t] {
      while (!stop) {
        auto got = store_->Get("c", absl::StrCat("d", (reads + t) % 50));
        auto count = store_->Count("c");
        if (!got.ok() || !count.ok() || *count < 50) ++failures;
        ++reads;
      }
    });
  }
  while (reads < 100) std::this_thread::yield();
  absl::Status reopened = store_->TryReopenWritable();
  const uint64_t at_swap = reads;
  while (reads < at_swap + 100) std::this_thread::yield();
  stop = true;
  for (auto& r : readers) r.join();
  ASSERT_TRUE(reopened.ok()) << reopened;
  EXPECT_EQ(failures, 0u);
  EXPECT_FALSE(store_->read_only());
  EXPECT_TRUE(store_->WriteState().ok());

  // Ids and the change log go on from where they were.
  auto written = store_->Upsert("c", {Doc("x")});
  ASSERT_TRUE(written.ok()) << written.status();
  EXPECT_EQ(written->at(0), seq + 1);
  EXPECT_GT(store_->Get("c", "x")->internal_id, last_id);
  ASSERT_TRUE(Open().ok());
  EXPECT_EQ(*store_->Count("c"), 51u);
}

// Nothing to read in a new directory: a full disk there is an error.
TEST_F(StoreReadOnlyTest, ANewStoreOnAFullDiskIsAClearError) {
  faults_.SetDiskFull(true);
  absl::Status s = Open();
  EXPECT_TRUE(absl::IsResourceExhausted(s)) << s;
  EXPECT_TRUE(absl::StrContains(s.message(), "full")) << s;
}

}  // namespace
}  // namespace neodb::db
