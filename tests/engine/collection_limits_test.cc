// Limits a client cannot talk the database past: the documented collection
// name length (64 bytes for new collections) and the number of collections
// (DatabaseOptions::max_collections).
#include <filesystem>

#include "absl/strings/str_cat.h"
#include "engine/database.h"
#include "engine/fake_embedder.h"
#include "gtest/gtest.h"

namespace neodb::engine {
namespace {

namespace fs = std::filesystem;

class CollectionLimitsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           absl::StrCat("neodb_limits_test_",
                        ::testing::UnitTest::GetInstance()->current_test_info()->name(), "_",
                        getpid());
    fs::remove_all(dir_);
  }
  void TearDown() override {
    db_.reset();
    fs::remove_all(dir_);
  }
  void Open(size_t max_collections) {
    db_.reset();
    DatabaseOptions o;
    o.data_dir = dir_.string();
    o.sync_writes = false;
    o.snapshot_interval = absl::ZeroDuration();
    o.max_collections = max_collections;
    auto db = Database::Open(o, std::make_unique<FakeEmbedder>(8, 32, 1));
    ASSERT_TRUE(db.ok()) << db.status();
    db_ = std::move(*db);
  }
  absl::Status Create(const std::string& name) {
    db::CollectionSpec spec;
    spec.name = name;
    spec.index_spec = "Flat";
    return db_->CreateCollection(spec).status();
  }

  fs::path dir_;
  std::unique_ptr<Database> db_;
};

TEST_F(CollectionLimitsTest, NamesOverSixtyFourBytesAreRefused) {
  Open(10);
  EXPECT_TRUE(Create(std::string(64, 'n')).ok());
  absl::Status s = Create(std::string(65, 'n'));
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(s.message(), "collection name is 65 bytes; the limit is 64");
  s = Create(std::string(128, 'n'));  // the store's own limit, once accepted here
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
}

TEST_F(CollectionLimitsTest, CreatingPastTheLimitIsResourceExhausted) {
  Open(2);
  ASSERT_TRUE(Create("a").ok());
  ASSERT_TRUE(Create("b").ok());
  absl::Status s = Create("c");
  EXPECT_EQ(s.code(), absl::StatusCode::kResourceExhausted);
  EXPECT_NE(s.message().find("holds 2 collections"), std::string::npos) << s;
  // A name that exists is still ALREADY_EXISTS, not the limit.
  EXPECT_EQ(Create("a").code(), absl::StatusCode::kAlreadyExists);
  // Dropping one makes room.
  ASSERT_TRUE(db_->DropCollection("a").ok());
  EXPECT_TRUE(Create("c").ok());
  auto list = db_->ListCollections();
  ASSERT_TRUE(list.ok()) << list.status();
  EXPECT_EQ(list->size(), 2u);
}

TEST_F(CollectionLimitsTest, ExistingCollectionsStayWhenTheLimitIsLowered) {
  Open(3);
  for (const char* name : {"a", "b", "c"}) ASSERT_TRUE(Create(name).ok());
  Open(1);
  auto list = db_->ListCollections();
  ASSERT_TRUE(list.ok()) << list.status();
  EXPECT_EQ(list->size(), 3u);
  EXPECT_EQ(Create("d").code(), absl::StatusCode::kResourceExhausted);
}

}  // namespace
}  // namespace neodb::engine
