// The checkpoint directory protocol shared by Trainer and MlmPretrainer:
// staging, atomic swap, and the checkpoint.old fallback on resume.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

#include "encoder/train/checkpoint_dir.h"

namespace neodb::encoder::train {
namespace {

namespace fs = std::filesystem;

fs::path FreshRoot(const std::string& name) {
  const fs::path root =
      fs::temp_directory_path() / ("neodb_ckdir_" + name + "_" + std::to_string(getpid()));
  fs::remove_all(root);
  return root;
}

std::string ReadAll(const fs::path& p) {
  std::ifstream in(p);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

TEST(CheckpointDir, StageWriteInstallReplacesThePreviousCheckpoint) {
  const fs::path root = FreshRoot("swap");
  for (const std::string text : {"{\"n\":1}", "{\"n\":2}"}) {
    absl::StatusOr<fs::path> tmp = StageCheckpointDir(root);
    ASSERT_TRUE(tmp.ok()) << tmp.status();
    EXPECT_EQ(*tmp, root / "checkpoint.tmp");
    EXPECT_TRUE(fs::is_empty(*tmp));
    ASSERT_TRUE(WriteCheckpointState(*tmp, text).ok());
    ASSERT_TRUE(InstallCheckpointDir(root).ok());
    EXPECT_EQ(ReadAll(root / "checkpoint" / "state.json"), text + "\n");
    EXPECT_FALSE(fs::exists(root / "checkpoint.tmp"));
    EXPECT_FALSE(fs::exists(root / "checkpoint.old"));
    EXPECT_EQ(FindCheckpointDir(root), root / "checkpoint");
  }
  fs::remove_all(root);
}

TEST(CheckpointDir, StageClearsAStaleStagingDirectory) {
  const fs::path root = FreshRoot("stale");
  fs::create_directories(root / "checkpoint.tmp");
  std::ofstream(root / "checkpoint.tmp" / "junk.bin") << "x";
  absl::StatusOr<fs::path> tmp = StageCheckpointDir(root);
  ASSERT_TRUE(tmp.ok()) << tmp.status();
  EXPECT_TRUE(fs::is_empty(*tmp));
  fs::remove_all(root);
}

TEST(CheckpointDir, ResumeFallsBackToOldOnlyWhenCheckpointHasNoState) {
  const fs::path root = FreshRoot("old");
  fs::create_directories(root / "checkpoint.old");
  std::ofstream(root / "checkpoint.old" / "state.json") << "{}";
  // A crash between the two renames: only checkpoint.old is complete.
  EXPECT_EQ(FindCheckpointDir(root), root / "checkpoint.old");
  fs::create_directories(root / "checkpoint");
  std::ofstream(root / "checkpoint" / "state.json") << "{}";
  EXPECT_EQ(FindCheckpointDir(root), root / "checkpoint");
  // Neither: the caller gets checkpoint and reports the missing state.json.
  fs::remove_all(root);
  EXPECT_EQ(FindCheckpointDir(root), root / "checkpoint");
}

}  // namespace
}  // namespace neodb::encoder::train
