// The memory Env keeps POSIX's rules (common/env_memory.h): where a file may
// be created, what rename and delete do to open files and to directories,
// the error codes; and the atomic writer works over it as over a disk.
#include <thread>
#include <vector>

#include "common/atomic_file.h"
#include "common/env_memory.h"
#include "common/line_reader.h"
#include "gtest/gtest.h"

namespace neodb {
namespace {

class MemEnvTest : public ::testing::Test {
 protected:
  std::string Read(const std::string& path) {
    absl::StatusOr<std::string> s = ReadFileToString(env_.get(), path);
    EXPECT_TRUE(s.ok()) << s.status();
    return s.ok() ? *s : "";
  }
  void Write(const std::string& path, std::string_view data) {
    auto f = env_->NewWritableFile(path);
    ASSERT_TRUE(f.ok()) << f.status();
    ASSERT_TRUE((*f)->Append(data).ok());
    ASSERT_TRUE((*f)->Close().ok());
  }
  std::vector<std::string> Children(const std::string& dir) {
    auto names = env_->GetChildren(dir);
    EXPECT_TRUE(names.ok()) << names.status();
    return names.ok() ? *names : std::vector<std::string>{};
  }
  std::unique_ptr<Env> env_ = NewMemEnv();
};

TEST_F(MemEnvTest, FilesLiveInDirectoriesThatExist) {
  EXPECT_TRUE(absl::IsNotFound(env_->NewWritableFile("/a/f").status()));
  ASSERT_TRUE(env_->CreateDir("/a/b/c").ok());
  ASSERT_TRUE(env_->CreateDir("/a/b").ok());  // exists: fine
  Write("/a/b/c/f", "hello");
  EXPECT_EQ(Read("/a//b/./c/f"), "hello");  // the same file, written otherwise
  EXPECT_EQ(*env_->GetFileSize("/a/b/c/f"), 5u);
  EXPECT_EQ(*env_->GetFileKind("/a/b"), FileKind::kDirectory);
  EXPECT_EQ(*env_->GetFileKind("/a/b/c/f"), FileKind::kFile);
  EXPECT_TRUE(absl::IsNotFound(env_->GetFileKind("/a/x").status()));
  // A file is not a directory, nor the reverse.
  EXPECT_TRUE(absl::IsUnavailable(env_->NewWritableFile("/a/b/c/f/g").status()));
  EXPECT_TRUE(absl::IsUnavailable(env_->CreateDir("/a/b/c/f")));
  EXPECT_TRUE(absl::IsUnavailable(env_->CreateDir("/a/b/c/f/g")));
  EXPECT_TRUE(absl::IsUnavailable(env_->NewWritableFile("/a/b").status()));
  EXPECT_TRUE(absl::IsUnavailable(env_->DeleteFile("/a/b")));
  EXPECT_TRUE(absl::IsUnavailable(env_->DeleteDir("/a/b/c/f")));
  EXPECT_TRUE(absl::IsUnavailable(env_->NewSequentialFile("/a/b").status()));
  EXPECT_TRUE(absl::IsUnavailable(env_->SyncDir("/a/b/c/f")));
  EXPECT_TRUE(absl::IsNotFound(env_->SyncDir("/nowhere")));
  // Relative paths live under ".", which exists from the start.
  Write("rel", "r");
  EXPECT_EQ(Read("./rel"), "r");
  EXPECT_TRUE(env_->SyncDir(".").ok());
}

TEST_F(MemEnvTest, ListsSortedNamesOfOneLevel) {
  ASSERT_TRUE(env_->CreateDir("/d/sub/deeper").ok());
  Write("/d/b", "");
  Write("/d/a", "");
  Write("/d/sub/x", "");
  EXPECT_EQ(Children("/d"), (std::vector<std::string>{"a", "b", "sub"}));
  EXPECT_EQ(Children("/"), (std::vector<std::string>{"d"}));
  EXPECT_TRUE(absl::IsNotFound(env_->GetChildren("/e").status()));
  EXPECT_TRUE(absl::IsUnavailable(env_->GetChildren("/d/a").status()));
}

TEST_F(MemEnvTest, DeletesFilesAndOnlyEmptyDirectories) {
  ASSERT_TRUE(env_->CreateDir("/d/sub").ok());
  Write("/d/sub/f", "x");
  EXPECT_TRUE(absl::IsUnavailable(env_->DeleteDir("/d/sub")));  // not empty
  EXPECT_TRUE(env_->DeleteFile("/d/sub/f").ok());
  EXPECT_TRUE(absl::IsNotFound(env_->DeleteFile("/d/sub/f")));
  EXPECT_TRUE(env_->DeleteDir("/d/sub").ok());
  EXPECT_TRUE(absl::IsNotFound(env_->DeleteDir("/d/sub")));
  EXPECT_TRUE(absl::IsUnavailable(env_->DeleteDir("/")));
  // A whole tree at once.
  ASSERT_TRUE(env_->CreateDir("/d/1/2/3").ok());
  Write("/d/1/2/f", "x");
  EXPECT_TRUE(env_->DeleteTree("/d").ok());
  EXPECT_FALSE(FileExists(env_.get(), "/d"));
  EXPECT_TRUE(Children("/").empty());
}

TEST_F(MemEnvTest, RenameReplacesAtomicallyAndOpenFilesFollowTheirInode) {
  Write("/old", "old");
  auto f = env_->NewWritableFile("/new.tmp");
  ASSERT_TRUE(f.ok());
  ASSERT_TRUE((*f)->Append("new").ok());
  ASSERT_TRUE(env_->RenameFile("/new.tmp", "/old").ok());
  EXPECT_EQ(Read("/old"), "new");
  EXPECT_FALSE(FileExists(env_.get(), "/new.tmp"));
  // The open file writes to the file under its new name.
  ASSERT_TRUE((*f)->Append("er").ok());
  EXPECT_EQ(Read("/old"), "newer");
  // Deleted while open: the writes go nowhere anyone can see.
  ASSERT_TRUE(env_->DeleteFile("/old").ok());
  ASSERT_TRUE((*f)->Append("!").ok());
  ASSERT_TRUE((*f)->Close().ok());
  EXPECT_FALSE(FileExists(env_.get(), "/old"));
  EXPECT_TRUE(absl::IsFailedPrecondition((*f)->Append("closed")));
  EXPECT_TRUE(absl::IsNotFound(env_->RenameFile("/missing", "/x")));
  Write("/y", "y");
  EXPECT_TRUE(absl::IsNotFound(env_->RenameFile("/y", "/no/dir/y")));
}

TEST_F(MemEnvTest, RenamesDirectoriesWithEverythingInThem) {
  ASSERT_TRUE(env_->CreateDir("/stage/sub").ok());
  Write("/stage/sub/f", "f");
  Write("/stage/g", "g");
  ASSERT_TRUE(env_->CreateDir("/final").ok());  // empty: replaced
  ASSERT_TRUE(env_->RenameFile("/stage", "/final").ok());
  EXPECT_EQ(Read("/final/sub/f"), "f");
  EXPECT_EQ(Read("/final/g"), "g");
  EXPECT_FALSE(FileExists(env_.get(), "/stage"));
  ASSERT_TRUE(env_->CreateDir("/full").ok());
  Write("/full/h", "h");
  EXPECT_TRUE(absl::IsUnavailable(env_->RenameFile("/final", "/full")));  // not empty
  EXPECT_TRUE(absl::IsUnavailable(env_->RenameFile("/final", "/final/sub/inside")));
  EXPECT_TRUE(absl::IsUnavailable(env_->RenameFile("/final", "/full/h")));  // onto a file
  EXPECT_TRUE(absl::IsUnavailable(env_->RenameFile("/full/h", "/final")));  // onto a dir
}

TEST_F(MemEnvTest, TruncatesInPlaceAndAppendsAtTheEnd) {
  Write("/j", "one\ntwo\n");
  auto a = env_->NewAppendableFile("/j");  // keeps what is there
  ASSERT_TRUE(a.ok());
  ASSERT_TRUE((*a)->Append("three\n").ok());
  EXPECT_EQ(Read("/j"), "one\ntwo\nthree\n");
  ASSERT_TRUE(env_->TruncateFile("/j", 4).ok());
  ASSERT_TRUE((*a)->Append("four\n").ok());  // at the new end
  EXPECT_EQ(Read("/j"), "one\nfour\n");
  ASSERT_TRUE(env_->TruncateFile("/j", 12).ok());  // grows with zeros
  EXPECT_EQ(Read("/j"), std::string("one\nfour\n\0\0\0", 12));
  auto created = env_->NewAppendableFile("/fresh");
  ASSERT_TRUE(created.ok());
  EXPECT_EQ(Read("/fresh"), "");
  // NewWritableFile truncates the file in place: the appender sees it empty.
  Write("/j", "w");
  ASSERT_TRUE((*a)->Append("+").ok());
  EXPECT_EQ(Read("/j"), "w+");
  EXPECT_TRUE(absl::IsNotFound(env_->TruncateFile("/none", 0)));
}

TEST_F(MemEnvTest, ReadsInPieces) {
  std::string big(100000, '\0');
  for (size_t i = 0; i < big.size(); ++i) big[i] = static_cast<char>(i % 251);
  Write("/big", big);
  auto in = env_->NewSequentialFile("/big");
  ASSERT_TRUE(in.ok());
  std::string got;
  char buf[777];
  for (;;) {
    auto n = (*in)->Read(sizeof buf, buf);
    ASSERT_TRUE(n.ok());
    if (*n == 0) break;
    got.append(buf, *n);
  }
  EXPECT_EQ(got, big);
}

// The atomic writers over the memory Env: the old contents until the
// commit, the new ones after, no temporary file either way.
TEST_F(MemEnvTest, AtomicWritersWorkOverIt) {
  ASSERT_TRUE(env_->CreateDir("/data").ok());
  ASSERT_TRUE(WriteFileAtomically(env_.get(), "/data/f", {"old"}).ok());
  auto w = AtomicFileWriter::Create(env_.get(), "/data/f");
  ASSERT_TRUE(w.ok()) << w.status();
  ASSERT_TRUE(w->Append(std::string(3 << 20, 'n')).ok());  // past the writer's buffer
  EXPECT_EQ(Read("/data/f"), "old");
  EXPECT_EQ(Children("/data").size(), 2u);  // the file and the writer's temporary
  ASSERT_TRUE(w->Commit().ok());
  EXPECT_EQ(Read("/data/f"), std::string(3 << 20, 'n'));
  EXPECT_EQ(Children("/data"), std::vector<std::string>{"f"});
  EXPECT_TRUE(absl::IsNotFound(WriteFileAtomically(env_.get(), "/nodir/f", {"x"})));
  EXPECT_FALSE(FileExists(env_.get(), "/nodir"));
}

// The bounded whole-file read refuses what is absent, not a file, or too big
// before reading it, with messages that name the path.
TEST_F(MemEnvTest, BoundedReadChecksKindAndSizeFirst) {
  ASSERT_TRUE(env_->CreateDir("/d").ok());
  Write("/d/f", "12345");
  absl::StatusOr<std::string> r = ReadFileToString(env_.get(), "/d/f", 5);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(*r, "12345");
  r = ReadFileToString(env_.get(), "/d/f", 4);
  EXPECT_TRUE(absl::IsInvalidArgument(r.status()));
  EXPECT_EQ(r.status().message(), "/d/f is 5 bytes, more than the limit of 4");
  r = ReadFileToString(env_.get(), "/d", 100);
  EXPECT_TRUE(absl::IsInvalidArgument(r.status()));
  EXPECT_EQ(r.status().message(), "/d is not a regular file");
  r = ReadFileToString(env_.get(), "/d/none", 100);
  EXPECT_TRUE(absl::IsNotFound(r.status()));
  EXPECT_EQ(r.status().message(), "/d/none does not exist");
}

TEST_F(MemEnvTest, LineReaderReadsLinesThenBytes) {
  // Lines longer than the reader's 64 KiB buffer, a blank one, a last one
  // without its newline.
  const std::string long_line(100000, 'x');
  Write("/f", "one\n\n" + long_line + "\nlast");
  absl::StatusOr<LineReader> in = LineReader::Open(env_.get(), "/f");
  ASSERT_TRUE(in.ok()) << in.status();
  std::string line;
  std::vector<std::string> lines;
  for (;;) {
    absl::StatusOr<bool> more = in->ReadLine(&line);
    ASSERT_TRUE(more.ok()) << more.status();
    if (!*more) break;
    lines.push_back(line);
  }
  EXPECT_EQ(lines, (std::vector<std::string>{"one", "", long_line, "last"}));
  EXPECT_FALSE(*in->ReadLine(&line));  // and stays at the end

  // A header line, then raw bytes (part from the buffer, part from the file).
  const std::string payload(200000, '\x7f');
  Write("/g", "header\n" + payload);
  in = LineReader::Open(env_.get(), "/g");
  ASSERT_TRUE(in.ok());
  ASSERT_TRUE(*in->ReadLine(&line, 6));
  EXPECT_EQ(line, "header");
  std::string got(payload.size() + 10, '\0');
  absl::StatusOr<size_t> n = in->Read(got.size(), got.data());
  ASSERT_TRUE(n.ok()) << n.status();
  EXPECT_EQ(*n, payload.size());  // fewer only at the end
  got.resize(*n);
  EXPECT_EQ(got, payload);

  // A line over the limit is refused without reading the rest of it.
  in = LineReader::Open(env_.get(), "/f");
  ASSERT_TRUE(*in->ReadLine(&line, 3));
  ASSERT_TRUE(*in->ReadLine(&line, 3));
  absl::StatusOr<bool> more = in->ReadLine(&line, 1000);
  EXPECT_TRUE(absl::IsOutOfRange(more.status()));
  EXPECT_EQ(more.status().message(), "/f: a line is longer than 1000 bytes");
  EXPECT_TRUE(absl::IsNotFound(LineReader::Open(env_.get(), "/none").status()));
}

// One lock for the tree: threads writing files side by side lose nothing.
TEST_F(MemEnvTest, ThreadsWriteSideBySide) {
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      const std::string dir = "/t" + std::to_string(t);
      ASSERT_TRUE(env_->CreateDir(dir).ok());
      auto log = env_->NewAppendableFile(dir + "/log");
      ASSERT_TRUE(log.ok());
      for (int i = 0; i < 200; ++i) {
        ASSERT_TRUE((*log)->Append("x").ok());
        ASSERT_TRUE(WriteFileAtomically(env_.get(), dir + "/f", {std::to_string(i)}).ok());
      }
    });
  }
  for (std::thread& t : threads) t.join();
  for (int t = 0; t < 4; ++t) {
    const std::string dir = "/t" + std::to_string(t);
    EXPECT_EQ(Read(dir + "/log"), std::string(200, 'x'));
    EXPECT_EQ(Read(dir + "/f"), "199");
    EXPECT_EQ(Children(dir), (std::vector<std::string>{"f", "log"}));
  }
}

}  // namespace
}  // namespace neodb
