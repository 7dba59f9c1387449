#include "index/snapshot.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "index/index_factory.h"
#include "tests/index/test_util.h"

namespace neodb::index {
namespace {

const bool kSingleThreadedBuilds = testing::UseSingleThreadedBuilds();

namespace fs = std::filesystem;
using testing::Iota;
using testing::RandomVectors;

class SnapshotTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = (fs::temp_directory_path() /
            ("neodb_snapshot_test_" + std::to_string(::getpid()) + "_" +
             ::testing::UnitTest::GetInstance()->current_test_info()->name()))
               .string();
    fs::remove_all(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::unique_ptr<VectorIndex> MakeFilled(const std::string& spec, size_t n) {
    auto index = *MakeIndex(spec, 16, Metric::kCosine);
    EXPECT_TRUE(index->Add(Iota(n), RandomVectors(n, 16, static_cast<uint32_t>(n))).ok());
    return index;
  }
  std::string dir_;
};

TEST_F(SnapshotTest, RoundTripEveryKind) {
  for (const char* spec : {"Flat", "HNSW16", "IVF4,PQ4"}) {
    fs::remove_all(dir_);
    auto index = MakeFilled(spec, 300);
    auto path = WriteSnapshot(dir_, *index, 42, "model-x");
    ASSERT_TRUE(path.ok()) << path.status();
    auto loaded = ReadLatestSnapshot(dir_);
    ASSERT_TRUE(loaded.ok()) << loaded.status();
    EXPECT_EQ(loaded->path, *path);
    EXPECT_EQ(loaded->manifest.covered_seq, 42u);
    EXPECT_EQ(loaded->manifest.model_id, "model-x");
    EXPECT_EQ(loaded->manifest.spec, index->spec());
    EXPECT_EQ(loaded->manifest.dimension, 16);
    EXPECT_EQ(loaded->manifest.metric, Metric::kCosine);
    EXPECT_EQ(loaded->manifest.count, index->size());
    EXPECT_EQ(loaded->index->Ids(), index->Ids());
  }
}

TEST_F(SnapshotTest, CorruptAndTruncatedSnapshotsAreSkipped) {
  auto older = MakeFilled("Flat", 100);
  auto newer = MakeFilled("Flat", 200);
  ASSERT_TRUE(WriteSnapshot(dir_, *older, 10, "m").ok());
  auto newest_path = WriteSnapshot(dir_, *newer, 20, "m");
  ASSERT_TRUE(newest_path.ok());
  // Flip one payload byte of the newest: checksum mismatch -> falls back to seq 10.
  {
    std::fstream f(*newest_path, std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(-100, std::ios::end);
    char c;
    f.read(&c, 1);
    f.seekp(-100, std::ios::end);
    c ^= 0x5a;
    f.write(&c, 1);
  }
  auto loaded = ReadLatestSnapshot(dir_);
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  EXPECT_EQ(loaded->manifest.covered_seq, 10u);
  EXPECT_EQ(loaded->index->size(), 100u);
  // Truncate the older too: nothing valid is left.
  fs::resize_file(loaded->path, fs::file_size(loaded->path) / 2);
  EXPECT_EQ(ReadLatestSnapshot(dir_).status().code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(ReadLatestSnapshot(dir_ + "/missing").status().code(), absl::StatusCode::kNotFound);
}

TEST_F(SnapshotTest, PrunesOldSnapshotsAndTempFiles) {
  auto index = MakeFilled("Flat", 10);
  fs::create_directories(dir_);
  std::ofstream(dir_ + "/snapshot-00000000000000000001-0.nsnap.tmp") << "torn";
  for (uint64_t seq = 1; seq <= 5; ++seq) ASSERT_TRUE(WriteSnapshot(dir_, *index, seq, "m").ok());
  std::vector<std::string> names;
  for (const auto& e : fs::directory_iterator(dir_)) names.push_back(e.path().filename().string());
  std::sort(names.begin(), names.end());
  ASSERT_EQ(names.size(), 2u);
  EXPECT_NE(names[0].find("00000000000000000004"), std::string::npos);
  EXPECT_NE(names[1].find("00000000000000000005"), std::string::npos);
  EXPECT_EQ(ReadLatestSnapshot(dir_)->manifest.covered_seq, 5u);
}

}  // namespace
}  // namespace neodb::index
