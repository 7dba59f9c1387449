// The POSIX Env on a real directory: what only a disk has (symlinks, FIFOs,
// the system calls themselves). Everything that merely writes through an Env
// is tested over the memory Env instead (env_test.cc, env_memory_test.cc).
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "common/env.h"
#include "common/line_reader.h"
#include "gtest/gtest.h"

namespace neodb {
namespace {

namespace fs = std::filesystem;

class PosixEnvTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("neodb_env_posix_test_" + std::to_string(getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string Path(const std::string& name) const { return (dir_ / name).string(); }
  Env* env_ = Env::Default();
  fs::path dir_;
};

TEST_F(PosixEnvTest, AppendsTruncatesReadsAndLists) {
  auto f = env_->NewAppendableFile(Path("log"));
  ASSERT_TRUE(f.ok()) << f.status();
  ASSERT_TRUE((*f)->Append("one\ntwo\n").ok());
  ASSERT_TRUE((*f)->Sync().ok());
  // Truncated under the open file, the next append lands at the new end.
  ASSERT_TRUE(env_->TruncateFile(Path("log"), 4).ok());
  ASSERT_TRUE((*f)->Append("three\n").ok());
  ASSERT_TRUE((*f)->Close().ok());
  EXPECT_EQ(*ReadFileToString(env_, Path("log")), "one\nthree\n");
  EXPECT_EQ(*env_->GetFileSize(Path("log")), 10u);
  // Reopened for append: kept, not truncated.
  auto g = env_->NewAppendableFile(Path("log"));
  ASSERT_TRUE(g.ok() && (*g)->Append("four\n").ok() && (*g)->Close().ok());
  EXPECT_EQ(*ReadFileToString(env_, Path("log")), "one\nthree\nfour\n");

  ASSERT_TRUE(env_->CreateDir(Path("d/e")).ok());
  auto names = env_->GetChildren(dir_.string());
  ASSERT_TRUE(names.ok()) << names.status();
  EXPECT_EQ(*names, (std::vector<std::string>{"d", "log"}));
  EXPECT_EQ(*env_->GetFileKind(Path("d")), FileKind::kDirectory);
  EXPECT_EQ(*env_->GetFileKind(Path("log")), FileKind::kFile);
  EXPECT_TRUE(absl::IsNotFound(env_->GetFileKind(Path("none")).status()));
  EXPECT_TRUE(absl::IsNotFound(env_->NewSequentialFile(Path("none")).status()));
  EXPECT_TRUE(absl::IsNotFound(env_->GetChildren(Path("none")).status()));
  EXPECT_TRUE(absl::IsNotFound(env_->TruncateFile(Path("none"), 0)));
}

// Reads on a disk: the bounded read refuses a directory and a FIFO (which
// it would otherwise block on) by kind, and a file by size, before opening;
// a LineReader reads a real file as the memory Env's does.
TEST_F(PosixEnvTest, BoundedReadAndLineReaderOnADisk) {
  std::ofstream(Path("f"), std::ios::binary) << "a\nbc\n";
  EXPECT_EQ(*ReadFileToString(env_, Path("f"), 5), "a\nbc\n");
  EXPECT_EQ(ReadFileToString(env_, Path("f"), 4).status().message(),
            Path("f") + " is 5 bytes, more than the limit of 4");
  ASSERT_EQ(::mkfifo(Path("fifo").c_str(), 0600), 0);
  EXPECT_EQ(ReadFileToString(env_, Path("fifo"), 100).status().message(),
            Path("fifo") + " is not a regular file");
  EXPECT_TRUE(absl::IsInvalidArgument(ReadFileToString(env_, dir_.string(), 100).status()));
  EXPECT_EQ(ReadFileToString(env_, Path("none"), 100).status().message(),
            Path("none") + " does not exist");

  absl::StatusOr<LineReader> in = LineReader::Open(env_, Path("f"));
  ASSERT_TRUE(in.ok()) << in.status();
  std::string line;
  ASSERT_TRUE(*in->ReadLine(&line));
  EXPECT_EQ(line, "a");
  ASSERT_TRUE(*in->ReadLine(&line));
  EXPECT_EQ(line, "bc");
  EXPECT_FALSE(*in->ReadLine(&line));
}

// CopyTree follows symlinks (a model cache links its files) and refuses
// what is neither file nor directory; DeleteTree removes a link, never what
// it points at.
TEST_F(PosixEnvTest, CopyTreeFollowsLinksAndDeleteTreeDoesNot) {
  fs::create_directories(dir_ / "target");
  std::ofstream(dir_ / "target" / "w") << "weights";
  fs::create_directories(dir_ / "src");
  fs::create_symlink(dir_ / "target" / "w", dir_ / "src" / "file_link");
  fs::create_symlink(dir_ / "target", dir_ / "src" / "dir_link");
  ASSERT_TRUE(env_->CopyTree(Path("src"), Path("dst")).ok());
  EXPECT_EQ(*ReadFileToString(env_, Path("dst/file_link")), "weights");
  EXPECT_EQ(*ReadFileToString(env_, Path("dst/dir_link/w")), "weights");
  EXPECT_FALSE(fs::is_symlink(dir_ / "dst" / "file_link"));

  ASSERT_TRUE(env_->DeleteTree(Path("src")).ok());
  EXPECT_FALSE(fs::exists(dir_ / "src"));
  EXPECT_EQ(*ReadFileToString(env_, Path("target/w")), "weights");

  fs::create_directories(dir_ / "odd");
  ASSERT_EQ(::mkfifo(Path("odd/fifo").c_str(), 0600), 0);
  EXPECT_EQ(*env_->GetFileKind(Path("odd/fifo")), FileKind::kOther);
  EXPECT_TRUE(absl::IsFailedPrecondition(env_->CopyTree(Path("odd"), Path("odd_copy"))));
}

}  // namespace
}  // namespace neodb
