#pragma once
// What every engine test fixture shares: a data directory of its own per test
// (removed before and after), the options a test database starts from (no
// fsync, no background snapshots), and opening one with a given default
// embedder. Fixtures add their models, collections and helpers on top.
#include <unistd.h>

#include <filesystem>
#include <memory>
#include <string>

#include "absl/strings/str_cat.h"
#include "engine/database.h"
#include "gtest/gtest.h"

namespace neodb::engine {

class EngineTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    dir_ = std::filesystem::temp_directory_path() /
           absl::StrCat("neodb_engine_", info->test_suite_name(), "_", info->name(), "_",
                        getpid());
    std::filesystem::remove_all(dir_);
  }
  void TearDown() override {
    db_.reset();
    std::filesystem::remove_all(dir_);
  }

  DatabaseOptions BaseOptions() const {
    DatabaseOptions o;
    o.data_dir = dir_.string();
    o.sync_writes = false;
    o.snapshot_interval = absl::ZeroDuration();
    return o;
  }
  // Closes the open database (if any) first: one Database per directory.
  void OpenWith(const DatabaseOptions& o, std::unique_ptr<Embedder> default_embedder) {
    db_.reset();
    auto db = Database::Open(o, std::move(default_embedder));
    ASSERT_TRUE(db.ok()) << db.status();
    db_ = std::move(*db);
  }

  std::filesystem::path dir_;
  std::unique_ptr<Database> db_;
};

}  // namespace neodb::engine
