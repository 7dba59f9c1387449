// The vector-facing CLI through the real binary and server: `collections
// create --vectors external`, `ingest` with a "vector" per line, `near-vector`
// (file and stdin) with --include-vector, `get --include-vector`, paged
// `list`, `verify`, `reindex-status`; and the refusals (wrong dimension,
// overflow to infinity, near-text and reindex on external vectors, a vector
// sent to a model collection). Vectors printed by the CLI read back (strtof)
// to the bits that went in.
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <fstream>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "tests/integration/test_env.h"

namespace neodb::testing {
namespace {

using JsonF32 = nlohmann::basic_json<std::map, std::vector, std::string, bool, std::int64_t,
                                     std::uint64_t, float>;

std::vector<std::string> Lines(const std::string& s) {
  std::vector<std::string> out;
  for (absl::string_view l : absl::StrSplit(s, '\n', absl::SkipEmpty())) out.emplace_back(l);
  return out;
}

// Vectors whose decimal forms are long (they do not survive a trip through
// 6-digit printing or through double-then-float rounding unnoticed).
std::vector<float> VectorOf(int i) {
  return {1.0f / static_cast<float>(i + 3), -0.1f * static_cast<float>(i + 1),
          static_cast<float>(M_PI) / static_cast<float>(i + 1), 1e-7f * static_cast<float>(i + 1)};
}

std::string JsonArray(const std::vector<float>& v) {
  std::string s = "[";
  for (size_t i = 0; i < v.size(); ++i) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.9g", v[i]);  // exact for floats
    absl::StrAppend(&s, i ? "," : "", buf);
  }
  return s + "]";
}

bool SameBits(const std::vector<float>& a, const std::vector<float>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
}

class CliVectorsTest : public ::testing::Test {
 protected:
  CliVectorsTest() : dir_("cli_vectors") {}
  void SetUp() override {
    std::vector<std::string> args = {"--data-dir", dir_.Sub("data")};
    for (auto& x : ModelArgs(dir_, 1)) args.push_back(x);
    server_ = std::make_unique<ServerProcess>(args);
    ASSERT_TRUE(server_->Start());
  }
  void TearDown() override { EXPECT_EQ(server_->Stop(), 0); }
  CommandResult Run(const std::string& args) {
    return RunNeodbCapture(absl::StrCat(args, " --server ", server_->address()), dir_.Sub(""));
  }
  std::string Write(const std::string& name, const std::string& text) {
    std::ofstream(dir_.Sub(name)) << text;
    return dir_.Sub(name);
  }

  TestDir dir_;
  std::unique_ptr<ServerProcess> server_;
};

TEST_F(CliVectorsTest, ExternalVectorsEndToEnd) {
  CommandResult r =
      Run("collections create e --vectors external --dimension 4 --vectors-name mine");
  ASSERT_EQ(r.status, 0) << r.err;
  auto info = nlohmann::json::parse(r.out);
  EXPECT_EQ(info["vectors"], "external");
  EXPECT_EQ(info["model_id"], "external:mine");
  EXPECT_EQ(info["dimension"], 4);

  std::string jsonl;
  for (int i = 0; i < 7; ++i) {
    absl::StrAppend(&jsonl, "{\"id\":\"d", i, "\",\"metadata\":{\"n\":", i,
                    "},\"vector\":", JsonArray(VectorOf(i)), i == 2 ? ",\"text\":\"two\"" : "",
                    "}\n");
  }
  r = Run(absl::StrCat("ingest --collection e ", Write("docs.jsonl", jsonl)));
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(nlohmann::json::parse(r.out)["documents"], 7);

  // near-vector from a file, with the stored vectors back.
  const std::string q = Write("q.json", JsonArray(VectorOf(3)));
  r = Run(absl::StrCat("near-vector --collection e -k 7 --include-vector ", q));
  ASSERT_EQ(r.status, 0) << r.err;
  auto lines = Lines(r.out);
  ASSERT_EQ(lines.size(), 7u) << r.out;
  EXPECT_EQ(JsonF32::parse(lines[0])["id"], "d3");
  for (const auto& l : lines) {
    JsonF32 h = JsonF32::parse(l);
    const int i = std::stoi(h["id"].get<std::string>().substr(1));
    std::vector<float> v;
    for (const auto& x : h["vector"]) v.push_back(x.get<float>());
    EXPECT_TRUE(SameBits(v, VectorOf(i))) << l;
    // Shortest round-trip text: never 17-digit doubles.
    EXPECT_FALSE(absl::StrContains(l, "0000000")) << l;
  }
  // With a filter, and from stdin ({"vector": …} form).
  const std::string cmd =
      absl::StrCat("echo '{\"vector\":", JsonArray(VectorOf(0)), "}' | ", NeodbBinary(),
                   " near-vector --collection e -k 3 --filter '{\"field\":\"n\",\"gte\":5}' "
                   "--server ",
                   server_->address(), " > ", dir_.Sub("stdin.out"), " 2>&1");
  ASSERT_EQ(std::system(cmd.c_str()), 0);
  std::ifstream in(dir_.Sub("stdin.out"));
  std::string got((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  lines = Lines(got);
  ASSERT_EQ(lines.size(), 2u) << got;
  for (const auto& l : lines) {
    const int n = nlohmann::json::parse(l)["metadata"]["n"].get<int>();
    EXPECT_GE(n, 5) << l;
    EXPECT_FALSE(absl::StrContains(l, "\"vector\"")) << l;
  }

  // get --include-vector.
  r = Run("get --collection e --include-vector d2");
  ASSERT_EQ(r.status, 0) << r.err;
  JsonF32 d = JsonF32::parse(r.out);
  EXPECT_EQ(d["text"], "two");
  std::vector<float> v;
  for (const auto& x : d["vector"]) v.push_back(x.get<float>());
  EXPECT_TRUE(SameBits(v, VectorOf(2)));

  // list: pages of 3, following the token, cover every document once.
  std::vector<std::string> ids;
  std::string token;
  for (int page = 0; page < 5; ++page) {
    r = Run(absl::StrCat("list --collection e --page-size 3",
                         token.empty() ? "" : absl::StrCat(" --page-token '", token, "'")));
    ASSERT_EQ(r.status, 0) << r.err;
    for (const auto& l : Lines(r.out)) ids.push_back(nlohmann::json::parse(l)["id"]);
    token.clear();
    for (const auto& l : Lines(r.err)) {
      if (absl::StartsWith(l, "next_page_token: ")) token = l.substr(17);
    }
    if (token.empty()) break;
  }
  EXPECT_EQ(ids, (std::vector<std::string>{"d0", "d1", "d2", "d3", "d4", "d5", "d6"}));
  r = Run("list --collection e --all --include-vector");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(Lines(r.out).size(), 7u);
  EXPECT_TRUE(absl::StrContains(r.out, "\"vector\":[")) << r.out;

  r = Run("verify --collection e");
  ASSERT_EQ(r.status, 0) << r.err;
  auto ver = nlohmann::json::parse(r.out);
  EXPECT_EQ(ver["stored"], 7);
  EXPECT_EQ(ver["indexed"], 7);
  EXPECT_EQ(ver["model_id"], "external:mine");

  r = Run("reindex-status --collection e");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(nlohmann::json::parse(r.out)["state"], "idle");
}

// search --include-vector on a model collection: each hit's vector is the
// stored one, bit for bit (what get --include-vector returns).
TEST_F(CliVectorsTest, NearTextReturnsStoredVectors) {
  ASSERT_EQ(Run("collections create m").status, 0);
  CommandResult r = Run(absl::StrCat(
      "ingest --collection m ",
      Write("m.jsonl", "{\"id\":\"a\",\"text\":\"alpha beta\"}\n"
                       "{\"id\":\"b\",\"text\":\"gamma delta\"}\n")));
  ASSERT_EQ(r.status, 0) << r.err;
  r = Run("search --json --collection m -k 2 --include-vector alpha");
  ASSERT_EQ(r.status, 0) << r.err;
  const auto lines = Lines(r.out);
  ASSERT_EQ(lines.size(), 2u) << r.out;
  for (const auto& l : lines) {
    JsonF32 h = JsonF32::parse(l);
    ASSERT_TRUE(h.contains("vector") && h.contains("score")) << l;
    CommandResult g = Run(absl::StrCat("get --collection m --include-vector ",
                                       h["id"].get<std::string>()));
    ASSERT_EQ(g.status, 0) << g.err;
    JsonF32 d = JsonF32::parse(g.out);
    std::vector<float> a, b;
    for (const auto& x : h["vector"]) a.push_back(x.get<float>());
    for (const auto& x : d["vector"]) b.push_back(x.get<float>());
    EXPECT_FALSE(a.empty());
    EXPECT_TRUE(SameBits(a, b)) << l;
  }
  // Without the flag, no vector.
  r = Run("search --json --collection m -k 1 alpha");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_FALSE(absl::StrContains(r.out, "\"vector\"")) << r.out;
}

TEST_F(CliVectorsTest, RefusalsAreClear) {
  ASSERT_EQ(Run("collections create e --vectors external --dimension 4").status, 0);
  ASSERT_EQ(Run("collections create m").status, 0);

  CommandResult r = Run(absl::StrCat("ingest --collection e ",
                                     Write("short.jsonl", "{\"id\":\"a\",\"vector\":[1,2,3]}\n")));
  EXPECT_NE(r.status, 0);
  EXPECT_TRUE(absl::StrContains(r.err, "has 3 values")) << r.err;
  // 1e39 is no float: refused while parsing (an error line, not a crash).
  r = Run(absl::StrCat("ingest --collection e ",
                       Write("inf.jsonl", "{\"id\":\"a\",\"vector\":[1,2,3,1e39]}\n")));
  EXPECT_EQ(r.status, 2) << r.err;
  EXPECT_TRUE(absl::StrContains(r.err, "inf.jsonl:1")) << r.err;
  EXPECT_TRUE(absl::StrContains(r.err, "overflow")) << r.err;
  r = Run(absl::StrCat("near-vector --collection e ", Write("inf.json", "[1,2,3,-1e39]")));
  EXPECT_EQ(r.status, 2) << r.err;
  EXPECT_TRUE(absl::StrContains(r.err, "overflow")) << r.err;
  r = Run(absl::StrCat("ingest --collection e ",
                       Write("text.jsonl", "{\"id\":\"a\",\"text\":\"no vector\"}\n")));
  EXPECT_NE(r.status, 0);
  EXPECT_TRUE(absl::StrContains(r.err, "has no vector")) << r.err;
  r = Run(absl::StrCat("ingest --collection e ",
                       Write("notnum.jsonl", "{\"id\":\"a\",\"vector\":[1,\"x\",3,4]}\n")));
  EXPECT_NE(r.status, 0);
  EXPECT_TRUE(absl::StrContains(r.err, "is not a number")) << r.err;
  r = Run(absl::StrCat("ingest --collection m ",
                       Write("m.jsonl", "{\"id\":\"a\",\"text\":\"alpha\",\"vector\":[1]}\n")));
  EXPECT_NE(r.status, 0);
  EXPECT_TRUE(absl::StrContains(r.err, "embeds its texts")) << r.err;

  r = Run("search --collection e alpha");
  EXPECT_NE(r.status, 0);
  EXPECT_TRUE(absl::StrContains(r.err, "no query model")) << r.err;
  r = Run("reindex --collection e");
  EXPECT_NE(r.status, 0);
  EXPECT_TRUE(absl::StrContains(r.err, "cannot re-embed")) << r.err;
  r = Run(absl::StrCat("near-vector --collection e ", Write("q2.json", "[1,2]")));
  EXPECT_NE(r.status, 0);
  EXPECT_TRUE(absl::StrContains(r.err, "dimension 4")) << r.err;
  r = Run(absl::StrCat("near-vector --collection e ", Write("bad.json", "{\"v\":[1]}")));
  EXPECT_NE(r.status, 0);
  EXPECT_TRUE(absl::StrContains(r.err, "expected [numbers]")) << r.err;
  r = Run("list --collection e --page-size 0");
  EXPECT_NE(r.status, 0);
  EXPECT_TRUE(absl::StrContains(r.err, "1..1000")) << r.err;
  r = Run("collections create x --vectors external");
  EXPECT_NE(r.status, 0);
  EXPECT_TRUE(absl::StrContains(r.err, "needs a dimension")) << r.err;
  r = Run("collections create x --vectors sideways");
  EXPECT_NE(r.status, 0);
  r = Run("verify --collection nope");
  EXPECT_NE(r.status, 0);
  EXPECT_TRUE(absl::StrContains(r.err, "does not exist")) << r.err;
}

}  // namespace
}  // namespace neodb::testing
