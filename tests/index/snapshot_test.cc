#include "index/snapshot.h"

#include <gtest/gtest.h>

#include <algorithm>

#include "common/atomic_file.h"
#include "common/env_memory.h"
#include "index/index_factory.h"
#include "tests/index/test_util.h"

namespace neodb::index {
namespace {

const bool kSingleThreadedBuilds = testing::UseSingleThreadedBuilds();

using testing::Iota;
using testing::RandomVectors;

// Snapshots in a memory Env: what these tests check is the bytes and the
// directory's listing, not a disk.
class SnapshotTest : public ::testing::Test {
 protected:
  std::unique_ptr<VectorIndex> MakeFilled(const std::string& spec, size_t n) {
    auto index = *MakeIndex(spec, 16, Metric::kCosine);
    EXPECT_TRUE(index->Add(Iota(n), RandomVectors(n, 16, static_cast<uint32_t>(n))).ok());
    return index;
  }
  absl::StatusOr<std::string> Write(const VectorIndex& index, uint64_t seq,
                                    const std::string& model_id) {
    return WriteSnapshot(dir_, index, seq, model_id, /*keep=*/2, env_.get());
  }
  absl::StatusOr<LoadedSnapshot> ReadLatest(const std::string& dir) {
    return ReadLatestSnapshot(dir, env_.get());
  }
  std::string Bytes(const std::string& path) { return *ReadFileToString(env_.get(), path); }
  void Replace(const std::string& path, const std::string& bytes) {
    ASSERT_TRUE(WriteFileAtomically(env_.get(), path, {bytes}).ok());
  }
  std::unique_ptr<Env> env_ = NewMemEnv();
  const std::string dir_ = "/snapshots";
};

TEST_F(SnapshotTest, RoundTripEveryKind) {
  for (const char* spec : {"Flat", "HNSW16", "IVF4,PQ4"}) {
    ASSERT_TRUE(env_->DeleteTree(dir_).ok());
    auto index = MakeFilled(spec, 300);
    auto path = Write(*index, 42, "model-x");
    ASSERT_TRUE(path.ok()) << path.status();
    auto loaded = ReadLatest(dir_);
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
  ASSERT_TRUE(Write(*older, 10, "m").ok());
  auto newest_path = Write(*newer, 20, "m");
  ASSERT_TRUE(newest_path.ok());
  // Flip one payload byte of the newest: checksum mismatch -> falls back to seq 10.
  std::string bytes = Bytes(*newest_path);
  bytes[bytes.size() - 100] ^= 0x5a;
  Replace(*newest_path, bytes);
  auto loaded = ReadLatest(dir_);
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  EXPECT_EQ(loaded->manifest.covered_seq, 10u);
  EXPECT_EQ(loaded->index->size(), 100u);
  // Truncate the older too: nothing valid is left.
  ASSERT_TRUE(env_->TruncateFile(loaded->path, Bytes(loaded->path).size() / 2).ok());
  EXPECT_EQ(ReadLatest(dir_).status().code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(ReadLatest(dir_ + "/missing").status().code(), absl::StatusCode::kNotFound);
}

TEST_F(SnapshotTest, PrunesOldSnapshotsAndTempFiles) {
  auto index = MakeFilled("Flat", 10);
  ASSERT_TRUE(env_->CreateDir(dir_).ok());
  Replace(dir_ + "/snapshot-00000000000000000001-0.nsnap.tmp", "torn");
  for (uint64_t seq = 1; seq <= 5; ++seq) ASSERT_TRUE(Write(*index, seq, "m").ok());
  const std::vector<std::string> names = *env_->GetChildren(dir_);  // sorted
  ASSERT_EQ(names.size(), 2u);
  EXPECT_NE(names[0].find("00000000000000000004"), std::string::npos);
  EXPECT_NE(names[1].find("00000000000000000005"), std::string::npos);
  EXPECT_EQ(ReadLatest(dir_)->manifest.covered_seq, 5u);
}

}  // namespace
}  // namespace neodb::index
