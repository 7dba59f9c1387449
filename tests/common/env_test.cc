// The Env twins over the memory Env (nothing here needs a disk; the POSIX
// Env's own tests are env_posix_test.cc): WriteFileAtomically under every
// fault at every write point leaves the old file intact and no temp file
// behind (or, for a torn rename, a short file that readers must reject);
// ENOSPC reads as RESOURCE_EXHAUSTED. Tree copies fail at every write point;
// the pausing twin pauses once.
#include <cerrno>
#include <memory>
#include <vector>

#include "common/atomic_file.h"
#include "common/env_memory.h"
#include "common/env_pausing.h"
#include "common/fault_env.h"
#include "common/status_macros.h"
#include "gtest/gtest.h"

namespace neodb {
namespace {

class EnvTest : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_TRUE(mem_->CreateDir("/t").ok()); }
  std::string Path(const std::string& name) const { return "/t/" + name; }
  // "" when absent, so a test reads like the old file check it replaces.
  std::string Slurp(const std::string& path) {
    absl::StatusOr<std::string> s = ReadFileToString(mem_.get(), path);
    return s.ok() ? *s : "";
  }
  bool Exists(const std::string& path) { return FileExists(mem_.get(), path); }
  std::unique_ptr<Env> mem_ = NewMemEnv();
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
  FaultInjectionEnv env(mem_.get(), &faults);
  const std::string path = Path("f");
  ASSERT_TRUE(WriteFileAtomically(&env, path, {"old ", "content"}).ok());
  faults.Reset();
  ASSERT_TRUE(WriteFileAtomically(&env, path, {"new ", "content!"}).ok());
  const uint64_t points = faults.ops();
  EXPECT_EQ(points, 6u);  // create, append x2, sync, rename, dir sync
  for (uint64_t n = 1; n <= points; ++n) {
    for (Fault f : {Fault::kIoError, Fault::kNoSpace, Fault::kTornRename}) {
      SCOPED_TRACE(testing::Message() << "point " << n << " fault " << static_cast<int>(f));
      ASSERT_TRUE(WriteFileAtomically(mem_.get(), path, {"before"}).ok());
      faults.FailNth(n, f);
      absl::Status s = WriteFileAtomically(&env, path, {"after ", "the write"});
      ASSERT_EQ(faults.injected(), 1u);
      faults.Reset();
      EXPECT_FALSE(Exists(path + ".tmp")) << "a failed write left its temp file";
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
        if (f == Fault::kNoSpace) {
          EXPECT_TRUE(absl::IsResourceExhausted(s)) << s;
        }
      }
    }
  }
}

// The streaming form: a file written in pieces larger and smaller than its
// buffer; a fault at any write point leaves the old file and no temporary
// file; an abandoned writer removes its temporary file.
TEST_F(EnvTest, AtomicFileWriterStreamsAndSurvivesAFaultAtEveryWritePoint) {
  const std::string path = Path("big");
  std::string big(3 * (1 << 20) + 17, '\0');
  for (size_t i = 0; i < big.size(); ++i) big[i] = static_cast<char>(i * 131 % 251);
  auto write = [&](Env* env) -> absl::Status {
    ASSIGN_OR_RETURN(AtomicFileWriter w, AtomicFileWriter::Create(env, path));
    RETURN_IF_ERROR(w.Append("head:"));
    RETURN_IF_ERROR(w.Append(big.data(), big.size()));
    RETURN_IF_ERROR(w.Append(std::string_view(":tail")));
    return w.Commit();
  };
  const std::string want = "head:" + big + ":tail";
  auto leftovers = [&] {
    absl::StatusOr<std::vector<std::string>> names = mem_->GetChildren("/t");
    EXPECT_TRUE(names.ok()) << names.status();
    return names.ok() ? static_cast<int>(names->size()) - 1 : -1;  // all but "big"
  };
  FaultInjector faults;
  FaultInjectionEnv env(mem_.get(), &faults);
  ASSERT_TRUE(write(&env).ok());
  EXPECT_EQ(Slurp(path), want);
  const uint64_t points = faults.ops();
  EXPECT_EQ(points, 8u);  // create, 4 buffered appends, sync, rename, dir sync
  for (uint64_t n = 1; n < points; ++n) {  // the last (dir sync) as WriteFileAtomically
    SCOPED_TRACE(testing::Message() << "point " << n);
    ASSERT_TRUE(WriteFileAtomically(mem_.get(), path, {"before"}).ok());
    faults.Reset();
    faults.FailNth(n, Fault::kNoSpace);
    absl::Status s = write(&env);
    ASSERT_EQ(faults.injected(), 1u);
    EXPECT_TRUE(absl::IsResourceExhausted(s)) << s;
    EXPECT_EQ(Slurp(path), "before");
    EXPECT_EQ(leftovers(), 0) << "a failed write left its temporary file";
  }
  faults.Reset();
  {
    auto w = AtomicFileWriter::Create(&env, path);
    ASSERT_TRUE(w.ok()) << w.status();
    ASSERT_TRUE(w->Append("abandoned").ok());
  }
  EXPECT_EQ(Slurp(path), "before");
  EXPECT_EQ(leftovers(), 0);
}

TEST_F(EnvTest, AFullDiskRefusesNewDataButLetsSpaceBeFreed) {
  FaultInjector faults;
  FaultInjectionEnv env(mem_.get(), &faults);
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
  FaultInjectionEnv env(mem_.get(), &faults);
  ASSERT_TRUE(WriteFileAtomically(&env, Path("src"), {std::string(200000, 'z')}).ok());
  ASSERT_TRUE(env.CopyFile(Path("src"), Path("dst")).ok());
  EXPECT_EQ(Slurp(Path("dst")), Slurp(Path("src")));
  faults.SetDiskFull(true);
  EXPECT_TRUE(absl::IsResourceExhausted(env.CopyFile(Path("src"), Path("dst2"))));
  EXPECT_TRUE(absl::IsNotFound(env.CopyFile(Path("missing"), Path("dst3"))));
}

TEST_F(EnvTest, CopyTreeCopiesEveryFileAndDeleteTreeRemovesIt) {
  ASSERT_TRUE(mem_->CreateDir(Path("src/sub/deeper")).ok());
  ASSERT_TRUE(WriteFileAtomically(mem_.get(), Path("src/a"), {"alpha"}).ok());
  ASSERT_TRUE(
      WriteFileAtomically(mem_.get(), Path("src/sub/deeper/b"), {std::string(200000, 'b')}).ok());
  FaultInjector faults;
  FaultInjectionEnv env(mem_.get(), &faults);
  ASSERT_TRUE(env.CopyTree(Path("src"), Path("dst")).ok());
  EXPECT_EQ(Slurp(Path("dst/a")), "alpha");
  EXPECT_EQ(Slurp(Path("dst/sub/deeper/b")), std::string(200000, 'b'));
  // Every write point fails the copy with the error.
  const uint64_t points = faults.ops();
  EXPECT_GE(points, 11u);  // 3 mkdir, 2 x (create, append.., sync), 3 dir syncs
  for (uint64_t n = 1; n <= points; ++n) {
    SCOPED_TRACE(testing::Message() << "point " << n);
    faults.FailNth(n, Fault::kNoSpace);
    absl::Status s = env.CopyTree(Path("src"), Path("dst") + std::to_string(n));
    EXPECT_TRUE(absl::IsResourceExhausted(s)) << s;
    faults.Reset();
    ASSERT_TRUE(env.DeleteTree(Path("dst") + std::to_string(n)).ok());
    EXPECT_FALSE(Exists(Path("dst") + std::to_string(n)));
  }
  ASSERT_TRUE(env.DeleteTree(Path("dst")).ok());
  EXPECT_FALSE(Exists(Path("dst")));
  EXPECT_TRUE(env.DeleteTree(Path("dst")).ok());  // absent: nothing to do
  EXPECT_EQ(Slurp(Path("src/sub/deeper/b")), std::string(200000, 'b'));
}

TEST_F(EnvTest, PausingEnvCallsItsHookBeforeTheNthWriteOnce) {
  PausingEnv env(mem_.get());
  std::vector<std::string> seen;
  env.PauseAt(2, [&](const std::string& what) {
    seen.push_back(what);
    // The write has not happened yet: the temp file holds no data.
    EXPECT_EQ(Slurp(Path("f.tmp")), "");
  });
  // create, append (the 2nd), append, sync, rename, dir sync
  ASSERT_TRUE(WriteFileAtomically(&env, Path("f"), {"one", "two"}).ok());
  ASSERT_EQ(seen.size(), 1u);
  EXPECT_EQ(seen[0], "append " + Path("f.tmp"));
  ASSERT_TRUE(WriteFileAtomically(&env, Path("f"), {"again"}).ok());
  EXPECT_EQ(seen.size(), 1u);
  EXPECT_EQ(Slurp(Path("f")), "again");
}

}  // namespace
}  // namespace neodb
