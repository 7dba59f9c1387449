// The Env twin: WriteFileAtomically under every fault at every write point
// leaves the old file intact and no temp file behind (or, for a torn rename,
// a short file that readers must reject); ENOSPC reads as RESOURCE_EXHAUSTED.
#include <cerrno>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "common/atomic_file.h"
#include "common/fault_env.h"
#include "gtest/gtest.h"

namespace neodb {
namespace {

namespace fs = std::filesystem;

std::string Slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

class EnvTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("neodb_env_test_" + std::to_string(getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string Path(const std::string& name) const { return (dir_ / name).string(); }
  fs::path dir_;
};

TEST_F(EnvTest, ErrnoStatusNamesTheCause) {
  EXPECT_TRUE(absl::IsResourceExhausted(ErrnoStatus(ENOSPC, "cannot write", "/x")));
  EXPECT_TRUE(absl::IsResourceExhausted(ErrnoStatus(EDQUOT, "cannot write", "/x")));
  EXPECT_TRUE(absl::IsNotFound(ErrnoStatus(ENOENT, "cannot open", "/x")));
  EXPECT_TRUE(absl::IsUnavailable(ErrnoStatus(EIO, "cannot fsync", "/x")));
  EXPECT_NE(ErrnoStatus(ENOSPC, "cannot write", "/x").message().find("/x"), std::string::npos);
}

TEST_F(EnvTest, AtomicWriteSurvivesAFaultAtEveryWritePoint) {
  FaultInjector faults;
  FaultInjectionEnv env(Env::Default(), &faults);
  const std::string path = Path("f");
  ASSERT_TRUE(WriteFileAtomically(&env, path, {"old ", "content"}).ok());
  faults.Reset();
  ASSERT_TRUE(WriteFileAtomically(&env, path, {"new ", "content!"}).ok());
  const uint64_t points = faults.ops();
  EXPECT_EQ(points, 6u);  // create, append x2, sync, rename, dir sync
  for (uint64_t n = 1; n <= points; ++n) {
    for (Fault f : {Fault::kIoError, Fault::kNoSpace, Fault::kTornRename}) {
      SCOPED_TRACE(testing::Message() << "point " << n << " fault " << static_cast<int>(f));
      ASSERT_TRUE(WriteFileAtomically(Env::Default(), path, {"before"}).ok());
      faults.FailNth(n, f);
      absl::Status s = WriteFileAtomically(&env, path, {"after ", "the write"});
      ASSERT_EQ(faults.injected(), 1u);
      faults.Reset();
      EXPECT_FALSE(fs::exists(path + ".tmp")) << "a failed write left its temp file";
      const std::string got = Slurp(path);
      if (n == 5 && f == Fault::kTornRename) {
        // The disk lied: "success" and a short file, which readers must
        // reject by checksum (snapshot.cc, keyword_snapshot.cc).
        EXPECT_TRUE(s.ok());
        EXPECT_EQ(got, std::string("after the write").substr(0, 7));
      } else if (n == 6) {
        // The rename happened; only its durability is in doubt.
        EXPECT_FALSE(s.ok());
        EXPECT_EQ(got, "after the write");
      } else {
        EXPECT_FALSE(s.ok());
        EXPECT_EQ(got, "before") << "the old file was touched";
        if (f == Fault::kNoSpace) EXPECT_TRUE(absl::IsResourceExhausted(s)) << s;
      }
    }
  }
}

TEST_F(EnvTest, AFullDiskRefusesNewDataButLetsSpaceBeFreed) {
  FaultInjector faults;
  FaultInjectionEnv env(Env::Default(), &faults);
  ASSERT_TRUE(WriteFileAtomically(&env, Path("a"), {"x"}).ok());
  faults.SetDiskFull(true);
  EXPECT_TRUE(absl::IsResourceExhausted(WriteFileAtomically(&env, Path("b"), {"y"})));
  EXPECT_TRUE(env.DeleteFile(Path("a")).ok());
  faults.SetDiskFull(false);
  EXPECT_TRUE(WriteFileAtomically(&env, Path("b"), {"y"}).ok());
  EXPECT_EQ(Slurp(Path("b")), "y");
}

TEST_F(EnvTest, CopyFileCopiesAndFailsCleanly) {
  FaultInjector faults;
  FaultInjectionEnv env(Env::Default(), &faults);
  ASSERT_TRUE(WriteFileAtomically(&env, Path("src"), {std::string(200000, 'z')}).ok());
  ASSERT_TRUE(env.CopyFile(Path("src"), Path("dst")).ok());
  EXPECT_EQ(Slurp(Path("dst")), Slurp(Path("src")));
  faults.SetDiskFull(true);
  EXPECT_TRUE(absl::IsResourceExhausted(env.CopyFile(Path("src"), Path("dst2"))));
  EXPECT_TRUE(absl::IsNotFound(env.CopyFile(Path("missing"), Path("dst3"))));
}

}  // namespace
}  // namespace neodb
