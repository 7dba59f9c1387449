// `neodb adapt --apply` and `--rollback` against the server's rules on model
// paths: every precondition of the swap is asked of the server before adapt
// lists, mines or trains anything (a server without --models-dir, an --out
// outside it, a key that may not reindex: refused at once, nothing written);
// without --out the model goes into the server's models directory; and a
// collection that started on the server's default model, outside
// --models-dir, rolls back onto it.
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "gtest/gtest.h"
#include "neodb/v1/neodb.grpc.pb.h"
#include "nlohmann/json.hpp"
#include "tests/integration/adapt_test_util.h"
#include "tests/integration/test_env.h"

namespace neodb::testing {
namespace {

namespace fs = std::filesystem;

// The entries of `dir`, by name.
std::vector<std::string> Entries(const std::string& dir) {
  std::vector<std::string> names;
  for (const auto& e : fs::directory_iterator(dir)) names.push_back(e.path().filename().string());
  return names;
}

// An adapt run refused before its work: the reason in its words, no listing
// of the collection (the first work adapt reports), nothing written.
void ExpectRefusedUpFront(const CommandResult& r, const std::string& reason) {
  EXPECT_NE(r.status, 0) << r.out;
  EXPECT_NE(r.err.find(reason), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("Nothing was done"), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find("documents, model"), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find("training queries"), std::string::npos) << r.err;
}

TEST(AdaptApplyTest, ApplyIsRefusedBeforeAnyWorkWhenTheServerCouldNotLoadTheModel) {
#ifndef NEODB_HAVE_ENCODER
  GTEST_SKIP() << "neodb adapt needs the encoder";
#endif
  TestDir dir("adapt_apply_refused");
  const std::string model = ModelDir(dir, 1);
  fs::create_directories(dir.Sub("work"));
  fs::create_directories(dir.Sub("models"));
  const std::string pairs = dir.Sub("pairs.jsonl");
  auto adapt = [&](const ServerProcess& server, const std::string& more) {
    // From work/, where adapt puts its default --out without a models directory.
    return RunNeodbCapture(
        absl::StrCat("adapt --collection c --pairs ", pairs, " --server ", server.address(),
                     " --eval-split 0.25 --steps 1 --batch-size 8 --apply", more),
        dir.Sub(""), dir.Sub("work"));
  };
  {
    // No --models-dir: the server takes no model paths over the API.
    ServerProcess server({"--data-dir", dir.Sub("data"), "--model", model});
    ASSERT_TRUE(server.Start());
    Admin c(server);
    std::vector<std::string> texts;
    c.CreateWithDocs("c", &texts);
    WritePrefixPairs(texts, pairs);
    const std::string old_id = c.Describe("c").model_id();
    // The default --out (the current directory), and one named.
    CommandResult r = adapt(server, "");
    ExpectRefusedUpFront(r, "start it with --models-dir DIR");
    EXPECT_NE(r.err.find("--out must then lie inside DIR"), std::string::npos) << r.err;
    r = adapt(server, " --out " + dir.Sub("out1"));
    ExpectRefusedUpFront(r, "start it with --models-dir DIR");
    EXPECT_FALSE(fs::exists(dir.Sub("out1")));
    EXPECT_FALSE(fs::exists(dir.Sub("out1.adapt")));
    EXPECT_TRUE(Entries(dir.Sub("work")).empty());
    // Without --apply the same run measures and writes (into the current
    // directory: the server names no models directory).
    r = RunNeodbCapture(
        absl::StrCat("adapt --collection c --pairs ", pairs, " --server ", server.address(),
                     " --eval-split 0.25 --steps 1 --batch-size 8"),
        dir.Sub(""), dir.Sub("work"));
    ASSERT_EQ(r.status, 0) << r.err;
    bool written = false;
    for (const std::string& e : Entries(dir.Sub("work"))) {
      written = written || (absl::StartsWith(e, "adapt-c-") && !absl::EndsWith(e, ".adapt"));
    }
    EXPECT_TRUE(written) << r.out;
    EXPECT_EQ(c.Describe("c").model_id(), old_id);
    EXPECT_EQ(server.Stop(), 0);
  }
  fs::remove_all(dir.Sub("work"));
  fs::create_directories(dir.Sub("work"));
  {
    // A models directory, and an --out outside it.
    ServerProcess server(
        {"--data-dir", dir.Sub("data"), "--model", model, "--models-dir", dir.Sub("models")});
    ASSERT_TRUE(server.Start());
    const std::string out = dir.Sub("elsewhere/new");
    CommandResult r = adapt(server, " --out " + out);
    ExpectRefusedUpFront(r, "is outside the models directory");
    EXPECT_NE(r.err.find("--out must lie inside the server's models directory"), std::string::npos)
        << r.err;
    EXPECT_FALSE(fs::exists(dir.Sub("elsewhere")));
    // `..` does not lead out either.
    r = adapt(server, " --out " + dir.Sub("models/../elsewhere"));
    ExpectRefusedUpFront(r, "is outside the models directory");
    EXPECT_FALSE(fs::exists(dir.Sub("elsewhere")));
    EXPECT_TRUE(Entries(dir.Sub("work")).empty());
    EXPECT_TRUE(Entries(dir.Sub("models")).empty());
    EXPECT_EQ(server.Stop(), 0);
  }
  {
    // A key that may write but not reindex.
    const std::string keys = dir.Sub("keys");
    CommandResult k =
        RunNeodbCapture(absl::StrCat("keys add --role write --key-file ", keys), dir.Sub(""));
    ASSERT_EQ(k.status, 0) << k.err;
    const std::string key(absl::StripAsciiWhitespace(k.out));
    ServerProcess server({"--data-dir", dir.Sub("data"), "--model", model, "--models-dir",
                          dir.Sub("models"), "--key-file", keys});
    ASSERT_TRUE(server.Start());
    CommandResult r = adapt(server, " --api-key " + key);
    ExpectRefusedUpFront(r, "needs admin");
    EXPECT_TRUE(Entries(dir.Sub("work")).empty());
    EXPECT_TRUE(Entries(dir.Sub("models")).empty());
    // The models directory is a server path: shown to admin keys only.
    CommandResult admin_key =
        RunNeodbCapture(absl::StrCat("keys add --role admin --key-file ", keys), dir.Sub(""));
    ASSERT_EQ(admin_key.status, 0) << admin_key.err;
    const std::string admin(absl::StripAsciiWhitespace(admin_key.out));
    // The key file is read at start: restart to take the new key.
    EXPECT_EQ(server.Stop(), 0);
    ASSERT_TRUE(server.Start());
    CommandResult as_writer = RunNeodbCapture(
        absl::StrCat("stats --json --server ", server.address(), " --api-key ", key), dir.Sub(""));
    ASSERT_EQ(as_writer.status, 0) << as_writer.err;
    EXPECT_NE(as_writer.out.find("\"models_dir\":\"\""), std::string::npos) << as_writer.out;
    CommandResult as_admin = RunNeodbCapture(
        absl::StrCat("stats --json --server ", server.address(), " --api-key ", admin),
        dir.Sub(""));
    ASSERT_EQ(as_admin.status, 0) << as_admin.err;
    EXPECT_EQ(as_admin.out.find("\"models_dir\":\"\""), std::string::npos) << as_admin.out;
    EXPECT_NE(as_admin.out.find("models"), std::string::npos) << as_admin.out;
    EXPECT_EQ(server.Stop(), 0);
  }
}

TEST(AdaptApplyTest, ApplyWritesIntoTheModelsDirAndRollsBackOntoTheDefaultModelOutsideIt) {
#ifndef NEODB_HAVE_ENCODER
  GTEST_SKIP() << "neodb adapt needs the encoder";
#endif
  TestDir dir("adapt_apply_rollback");
  // The server's default model lies outside its models directory.
  const std::string model = ModelDir(dir, 1);
  fs::create_directories(dir.Sub("models"));
  fs::create_directories(dir.Sub("work"));
  ServerProcess server(
      {"--data-dir", dir.Sub("data"), "--model", model, "--models-dir", dir.Sub("models")});
  ASSERT_TRUE(server.Start());
  Admin c(server);
  std::vector<std::string> texts;
  c.CreateWithDocs("c", &texts);
  const std::string pairs = dir.Sub("pairs.jsonl");
  WritePrefixPairs(texts, pairs);
  const std::string old_id = c.Describe("c").model_id();
  ASSERT_EQ(c.Describe("c").model_dir(), model);

  // No --out: the new model goes into the models directory, and is applied.
  CommandResult r = RunNeodbCapture(
      absl::StrCat("adapt --collection c --pairs ", pairs, " --server ", server.address(),
                   " --eval-split 0.25 --steps 1 --batch-size 8 --apply --min-gain -2"),
      dir.Sub(""), dir.Sub("work"));
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_TRUE(Entries(dir.Sub("work")).empty());
  std::string out;
  for (const std::string& e : Entries(dir.Sub("models"))) {
    if (absl::StartsWith(e, "adapt-c-") && !absl::EndsWith(e, ".adapt")) {
      out = dir.Sub("models/" + e);
    }
  }
  ASSERT_FALSE(out.empty()) << r.out;
  const std::string new_id = ReadJsonFile(out + "/lineage.json").value("model_id", "");
  ASSERT_NE(new_id, old_id);
  EXPECT_NE(r.out.find("applied: c is on " + new_id), std::string::npos) << r.out;
  c.ExpectWhole("c", new_id);
  EXPECT_EQ(c.Describe("c").model_dir(), fs::canonical(out).string());

  // Back onto the default model, which lies outside --models-dir.
  r = RunNeodbCapture(absl::StrCat("adapt --rollback c --server ", server.address()), dir.Sub(""));
  ASSERT_EQ(r.status, 0) << r.err;
  c.ExpectWhole("c", old_id);
  EXPECT_EQ(c.Describe("c").model_dir(), model);
  EXPECT_EQ(c.Describe("c").spec().fusion(), "weighted");
  EXPECT_EQ(c.Describe("c").spec().fusion_alpha(), 0.9);
  // And forth again: the adapted model is the collection's previous one now
  // (and inside the models directory anyway).
  r = RunNeodbCapture(absl::StrCat("reindex --collection c --model ", out, " --server ",
                                   server.address()),
                      dir.Sub(""));
  ASSERT_EQ(r.status, 0) << r.err;
  c.ExpectWhole("c", new_id);
  EXPECT_EQ(server.Stop(), 0);
}

}  // namespace
}  // namespace neodb::testing
