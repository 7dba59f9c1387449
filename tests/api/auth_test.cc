// The pieces of api/auth that need no server: the key file grammar, the key
// ring's reload, the models-directory confinement and the loopback rule.
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "api/auth/api_keys.h"
#include "api/auth/method_roles.h"
#include "api/auth/model_paths.h"
#include "api/auth/transport_security.h"
#include "common/atomic_file.h"
#include "common/env_memory.h"
#include "gtest/gtest.h"

namespace neodb::api {
namespace {

namespace fs = std::filesystem;

class Scratch {
 public:
  Scratch() : path_(fs::temp_directory_path() / absl::StrCat("neodb_auth_", getpid())) {
    fs::remove_all(path_);
    fs::create_directories(path_);
  }
  ~Scratch() { fs::remove_all(path_); }
  std::string Sub(const std::string& s) const { return (path_ / s).string(); }

 private:
  fs::path path_;
};

TEST(KeyFileTest, ParsesLinesCommentsAndRoles) {
  const std::string a = KeyFileLine("key-a", Role::kRead, "alice");
  const std::string b = KeyFileLine("key-b", Role::kAdmin, "bob");
  auto keys = ParseKeyFile(absl::StrCat("# keys\n\n", a, "\n   ", b, "  \n"), "f");
  ASSERT_TRUE(keys.ok()) << keys.status();
  ASSERT_EQ(keys->size(), 2u);
  EXPECT_EQ((*keys)[0].name, "alice");
  EXPECT_EQ((*keys)[0].role, Role::kRead);
  EXPECT_EQ((*keys)[0].sha256_hex, Sha256Hex("key-a"));
  EXPECT_EQ((*keys)[1].role, Role::kAdmin);
  // SHA-256("abc"), FIPS 180-2 appendix B.1.
  EXPECT_EQ(Sha256Hex("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
}

TEST(KeyFileTest, RefusesMalformedFilesNamingTheLine) {
  const std::string good = KeyFileLine("k", Role::kRead, "n");
  const std::string hex = Sha256Hex("x");
  for (const std::string& bad : {
           std::string(""),                                            // no keys
           std::string("# only a comment\n"),                          // no keys
           absl::StrCat(good, "\nsha256:", hex, " root n"),            // unknown role
           absl::StrCat(good, "\nmd5:", hex, " read n"),               // wrong scheme
           absl::StrCat(good, "\nsha256:", hex.substr(1), " read n"),  // short hash
           absl::StrCat(good, "\nsha256:", hex, " read"),              // no name
           absl::StrCat(good, "\nsha256:", hex, " read n extra"),
           absl::StrCat(good, "\n", good),  // the same key twice
       }) {
    SCOPED_TRACE(bad);
    auto keys = ParseKeyFile(bad, "keys.txt");
    ASSERT_FALSE(keys.ok());
    EXPECT_EQ(keys.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_NE(keys.status().message().find("keys.txt"), absl::string_view::npos);
  }
  auto keys = ParseKeyFile(absl::StrCat(good, "\nsha256:", hex, " root n"), "keys.txt");
  EXPECT_NE(keys.status().message().find("keys.txt:2:"), absl::string_view::npos) << keys.status();
}

TEST(KeyRingTest, ReloadReplacesKeysAndAFailedReloadKeepsThem) {
  Scratch dir;
  const std::string path = dir.Sub("keys");
  { std::ofstream(path) << KeyFileLine("one", Role::kWrite, "w") << "\n"; }
  auto ring = KeyRing::Open(path);
  ASSERT_TRUE(ring.ok()) << ring.status();
  ASSERT_TRUE((*ring)->Find("one").has_value());
  EXPECT_EQ((*ring)->Find("one")->role, Role::kWrite);
  EXPECT_FALSE((*ring)->Find("two").has_value());
  EXPECT_FALSE((*ring)->Find("").has_value());

  { std::ofstream(path) << KeyFileLine("two", Role::kRead, "r") << "\n"; }
  ASSERT_TRUE((*ring)->Reload().ok());
  EXPECT_FALSE((*ring)->Find("one").has_value());
  EXPECT_TRUE((*ring)->Find("two").has_value());

  { std::ofstream(path) << "garbage\n"; }
  EXPECT_FALSE((*ring)->Reload().ok());
  EXPECT_TRUE((*ring)->Find("two").has_value());
  fs::remove(path);
  EXPECT_EQ((*ring)->Reload().code(), absl::StatusCode::kNotFound);
  EXPECT_TRUE((*ring)->Find("two").has_value());
  EXPECT_FALSE(KeyRing::Open(dir.Sub("absent")).ok());
}

TEST(KeyRingTest, GeneratedKeysAreDistinct) {
  auto a = GenerateApiKey(), b = GenerateApiKey();
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_NE(*a, *b);
  EXPECT_EQ(a->size(), 6u + 64u);
}

TEST(MethodRolesTest, OpenOnlyHealthAndReflectionUnknownNeedsAdmin) {
  EXPECT_EQ(AccessFor("/grpc.health.v1.Health/Check").access, Access::kOpen);
  EXPECT_EQ(AccessFor("/grpc.reflection.v1alpha.ServerReflection/ServerReflectionInfo").access,
            Access::kOpen);
  MethodAccess unknown = AccessFor("/neodb.v1.Admin/SomethingNew");
  EXPECT_EQ(unknown.access, Access::kRequires);
  EXPECT_EQ(unknown.role, Role::kAdmin);
  EXPECT_EQ(AccessFor("").role, Role::kAdmin);
  EXPECT_EQ(AccessFor("/neodb.v1.Search/NearText").role, Role::kRead);
}

TEST(ModelPathsTest, ConfinesToTheModelsDir) {
  Scratch dir;
  fs::create_directories(dir.Sub("models/m1"));
  fs::create_directories(dir.Sub("models2/m"));
  fs::create_directories(dir.Sub("elsewhere"));
  fs::create_directory_symlink(dir.Sub("elsewhere"), dir.Sub("models/out"));
  fs::create_directory_symlink(dir.Sub("models/m1"), dir.Sub("models/in"));
  const std::string root = dir.Sub("models");
  const std::string m1 = fs::canonical(dir.Sub("models/m1")).string();
  EXPECT_EQ(*ConfineModelPath(root, "m1"), m1);
  EXPECT_EQ(*ConfineModelPath(root, dir.Sub("models/m1")), m1);
  EXPECT_EQ(*ConfineModelPath(root, "in"), m1);  // a link that stays inside
  EXPECT_EQ(*ConfineModelPath(root + "/", "./m1/"), m1);
  for (const std::string& bad :
       {std::string("../elsewhere"), std::string("out"), dir.Sub("elsewhere"), dir.Sub("models2/m"),
        std::string("../models2/m"), std::string("/")}) {
    SCOPED_TRACE(bad);
    EXPECT_EQ(ConfineModelPath(root, bad).status().code(), absl::StatusCode::kPermissionDenied);
  }
  EXPECT_EQ(ConfineModelPath(root, "missing").status().code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(ConfineModelPath("", "m1").status().code(), absl::StatusCode::kPermissionDenied);
}

TEST(ModelPathsTest, TheServersOwnModelsAreAllowedWhereverTheyLie) {
  Scratch dir;
  fs::create_directories(dir.Sub("models/m1"));
  fs::create_directories(dir.Sub("default_model"));
  fs::create_directories(dir.Sub("previous"));
  fs::create_directories(dir.Sub("other"));
  fs::create_directory_symlink(dir.Sub("default_model"), dir.Sub("link_to_default"));
  const std::string root = dir.Sub("models");
  const std::string def = fs::canonical(dir.Sub("default_model")).string();
  // As recorded: the default as the server was given it, the previous model
  // through a path with a '..' in it.
  const std::vector<std::string> own = {dir.Sub("link_to_default"), "",
                                        dir.Sub("models/../previous"), dir.Sub("gone")};
  for (const std::string& models_dir : {root, std::string()}) {
    SCOPED_TRACE(models_dir);
    EXPECT_EQ(*ConfineModelPath(models_dir, dir.Sub("default_model"), own), def);
    EXPECT_EQ(*ConfineModelPath(models_dir, dir.Sub("default_model/"), own), def);
    EXPECT_EQ(*ConfineModelPath(models_dir, dir.Sub("previous"), own),
              fs::canonical(dir.Sub("previous")).string());
    // Anything else is as without them: another directory beside them, a
    // parent of one, a recorded one that is gone.
    for (const std::string& other : {dir.Sub("other"), dir.Sub("")}) {
      SCOPED_TRACE(other);
      EXPECT_EQ(ConfineModelPath(models_dir, other, own).status().code(),
                absl::StatusCode::kPermissionDenied);
    }
    EXPECT_EQ(ConfineModelPath(models_dir, dir.Sub("gone"), own).status().code(),
              models_dir.empty() ? absl::StatusCode::kPermissionDenied
                                 : absl::StatusCode::kNotFound);
  }
  // Relative names are taken from the models directory only.
  EXPECT_EQ(ConfineModelPath(root, "../default_model", own).value_or(""), def);
  EXPECT_EQ(ConfineModelPath("", "default_model", own).status().code(),
            absl::StatusCode::kPermissionDenied);
}

TEST(ModelPathsTest, FutureModelPathsAreCheckedByTheirNearestExistingParent) {
  Scratch dir;
  fs::create_directories(dir.Sub("models/m1"));
  fs::create_directories(dir.Sub("elsewhere"));
  fs::create_directory_symlink(dir.Sub("elsewhere"), dir.Sub("models/out"));
  const std::string root = dir.Sub("models");
  const std::string real_root = fs::canonical(root).string();
  auto p = ConfineFutureModelPath(root, "new/deeper");
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_EQ(*p, real_root + "/new/deeper");
  EXPECT_EQ(*ConfineFutureModelPath(root, dir.Sub("models/m1/next/")), real_root + "/m1/next");
  EXPECT_EQ(*ConfineFutureModelPath(root, "m1"), real_root + "/m1");  // exists: as ConfineModelPath
  for (const std::string& bad :
       {dir.Sub("new"), std::string("../new"), std::string("out/new"), std::string("out/a/b"),
        std::string("m1/../../new"), std::string("/new-at-root"), std::string("out")}) {
    SCOPED_TRACE(bad);
    auto s = ConfineFutureModelPath(root, bad);
    EXPECT_EQ(s.status().code(), absl::StatusCode::kPermissionDenied) << s.status();
  }
  EXPECT_EQ(ConfineFutureModelPath("", "new").status().code(), absl::StatusCode::kPermissionDenied);
  EXPECT_NE(
      ConfineFutureModelPath("", dir.Sub("models/new")).status().message().find("--models-dir"),
      std::string::npos);
}

TEST(ModelPathsTest, NewPathsStayInsideTheBackupDir) {
  Scratch dir;
  fs::create_directories(dir.Sub("backups/old"));
  fs::create_directories(dir.Sub("elsewhere"));
  fs::create_directory_symlink(dir.Sub("elsewhere"), dir.Sub("backups/out"));
  const std::string root = dir.Sub("backups");
  auto b = ConfineNewPath(root, "b1");
  ASSERT_TRUE(b.ok()) << b.status();
  EXPECT_EQ(*b, (fs::canonical(root) / "b1").string());
  EXPECT_TRUE(ConfineNewPath(root, "old/b2").ok());
  EXPECT_EQ(ConfineNewPath(root, "old").status().code(), absl::StatusCode::kAlreadyExists);
  for (const std::string& bad :
       {std::string("../b"), std::string("out/b"), dir.Sub("b"), std::string("/tmp/b")}) {
    SCOPED_TRACE(bad);
    EXPECT_EQ(ConfineNewPath(root, bad).status().code(), absl::StatusCode::kPermissionDenied);
  }
  // ".." and "." name the backup dir's parent or itself: outside, or no new entry.
  EXPECT_EQ(ConfineNewPath(root, "..").status().code(), absl::StatusCode::kPermissionDenied);
  EXPECT_FALSE(ConfineNewPath(root, ".").ok());
  EXPECT_EQ(ConfineNewPath("", "b").status().code(), absl::StatusCode::kFailedPrecondition);
}

TEST(TransportSecurityTest, LoopbackAndTheInsecureRule) {
  EXPECT_TRUE(IsLoopbackListen("127.0.0.1:0"));
  EXPECT_TRUE(IsLoopbackListen("127.1.2.3:50051"));
  EXPECT_TRUE(IsLoopbackListen("localhost:1"));
  EXPECT_TRUE(IsLoopbackListen("[::1]:50051"));
  EXPECT_FALSE(IsLoopbackListen("0.0.0.0:0"));
  EXPECT_FALSE(IsLoopbackListen("[::]:50051"));
  EXPECT_FALSE(IsLoopbackListen("10.0.0.1:50051"));
  EXPECT_FALSE(IsLoopbackListen("example.com:50051"));

  SecurityOptions plain;
  EXPECT_TRUE(MakeServerCredentials(plain, "127.0.0.1:0", nullptr).ok());
  auto refused = MakeServerCredentials(plain, "0.0.0.0:0", nullptr);
  EXPECT_EQ(refused.status().code(), absl::StatusCode::kFailedPrecondition);
  SecurityOptions insecure;
  insecure.insecure = true;
  auto allowed = MakeServerCredentials(insecure, "0.0.0.0:0", nullptr);
  ASSERT_TRUE(allowed.ok());
  EXPECT_FALSE(allowed->warning.empty());
  SecurityOptions half;
  half.tls_cert = "/nonexistent.pem";
  EXPECT_EQ(MakeServerCredentials(half, "127.0.0.1:0", nullptr).status().code(),
            absl::StatusCode::kInvalidArgument);
  SecurityOptions ca_only;
  ca_only.tls_client_ca = "/nonexistent.pem";
  EXPECT_EQ(MakeServerCredentials(ca_only, "127.0.0.1:0", nullptr).status().code(),
            absl::StatusCode::kInvalidArgument);
}

// The key file and the PEM files are read through the Env they are given: a
// memory Env serves them with no file on disk, reloads included.
TEST(KeyRingTest, KeyFileAndPemReadThroughTheEnv) {
  std::unique_ptr<Env> env = NewMemEnv();
  const std::string line = KeyFileLine("one", Role::kAdmin, "a") + "\n";
  ASSERT_TRUE(WriteFileAtomically(env.get(), "/keys", {line}).ok());
  auto keys = ReadKeyFile("/keys", env.get());
  ASSERT_TRUE(keys.ok()) << keys.status();
  ASSERT_EQ(keys->size(), 1u);
  EXPECT_EQ((*keys)[0].role, Role::kAdmin);
  EXPECT_EQ(ReadKeyFile("/none", env.get()).status().message(), "cannot read key file /none");
  EXPECT_EQ(ReadKeyFile("/keys").status().code(), absl::StatusCode::kNotFound);  // not on disk

  auto ring = KeyRing::Open("/keys", env.get());
  ASSERT_TRUE(ring.ok()) << ring.status();
  EXPECT_TRUE((*ring)->Find("one").has_value());
  ASSERT_TRUE(
      WriteFileAtomically(env.get(), "/keys", {KeyFileLine("two", Role::kRead, "r") + "\n"}).ok());
  ASSERT_TRUE((*ring)->Reload().ok());
  EXPECT_FALSE((*ring)->Find("one").has_value());
  EXPECT_TRUE((*ring)->Find("two").has_value());

  ASSERT_TRUE(WriteFileAtomically(env.get(), "/cert.pem", {"-----BEGIN CERTIFICATE-----\n"}).ok());
  auto pem = ReadPem("/cert.pem", "--tls-cert", env.get());
  ASSERT_TRUE(pem.ok()) << pem.status();
  auto absent = ReadPem("/none.pem", "--tls-cert", env.get());
  EXPECT_TRUE(absl::IsInvalidArgument(absent.status()));
  EXPECT_NE(absent.status().message().find("--tls-cert: cannot read /none.pem"),
            absl::string_view::npos);
  EXPECT_FALSE(ReadPem("/keys", "--tls-key", env.get()).ok());  // not PEM
}

}  // namespace
}  // namespace neodb::api
