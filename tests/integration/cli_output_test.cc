// The CLI's readable output through the real binary and server: `neodb
// search` prints a table (rank, id, score, a snippet with the query's terms
// marked; with --explain each leg's rank and score and the fusion weight),
// `stats` and `collections describe` key: value lines; --json gives the JSON
// that scripts read. The snippet rules themselves: tests/tools/text_table_test.
#include <fstream>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "tests/integration/test_env.h"

namespace neodb::testing {
namespace {

std::vector<std::string> Lines(const std::string& s) {
  return absl::StrSplit(s, '\n', absl::SkipEmpty());
}

class CliOutputTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::vector<std::string> args = {"--data-dir", dir_.Sub("data")};
    for (auto& a : ModelArgs(dir_, 1)) args.push_back(a);
    server_ = std::make_unique<ServerProcess>(args);
    ASSERT_TRUE(server_->Start());
    ASSERT_EQ(Run("collections create docs").status, 0);
    std::string long_text;
    for (int i = 0; i < 20; ++i) long_text += "bravo charlie ";
    long_text += "alpha";
    for (int i = 0; i < 20; ++i) long_text += " delta echo";
    std::ofstream f(dir_.Sub("docs.jsonl"));
    f << "{\"id\":\"long\",\"text\":\"" << long_text << "\"}\n"
      << "{\"id\":\"short\",\"text\":\"Alpha\\nriver é 日本\"}\n"
      << "{\"id\":\"other\",\"text\":\"stone cloud\"}\n";
    f.close();
    ASSERT_EQ(Run(absl::StrCat("ingest --collection docs ", dir_.Sub("docs.jsonl"))).status, 0);
  }
  void TearDown() override { EXPECT_EQ(server_->Stop(), 0); }

  CommandResult Run(const std::string& args) {
    return RunNeodbCapture(absl::StrCat(args, " --server ", server_->address()), dir_.Sub(""));
  }

  TestDir dir_{"cli_output"};
  std::unique_ptr<ServerProcess> server_;
};

TEST_F(CliOutputTest, SearchPrintsATable) {
  // Keyword mode: exactly the two texts with "alpha", whatever the model.
  CommandResult r = Run("search --mode keyword --collection docs alpha");
  ASSERT_EQ(r.status, 0) << r.err;
  const auto lines = Lines(r.out);
  ASSERT_EQ(lines.size(), 3u) << r.out;
  EXPECT_TRUE(absl::StartsWith(lines[0], "#  id")) << r.out;
  EXPECT_TRUE(absl::StrContains(lines[0], "score")) << r.out;
  EXPECT_TRUE(absl::StrContains(lines[0], "text")) << r.out;
  for (size_t i = 1; i < lines.size(); ++i) {
    EXPECT_TRUE(absl::StartsWith(lines[i], absl::StrCat(i, "  "))) << lines[i];
    EXPECT_FALSE(absl::StrContains(lines[i], "{")) << lines[i];
  }
  // The long text: cut on both sides at words, the term marked, in one line.
  const std::string& long_row = absl::StrContains(lines[1], "long") ? lines[1] : lines[2];
  const std::string& short_row = absl::StrContains(lines[1], "long") ? lines[2] : lines[1];
  EXPECT_TRUE(absl::StrContains(long_row, "…charlie")) << long_row;
  EXPECT_TRUE(absl::StrContains(long_row, " [alpha] delta echo")) << long_row;
  EXPECT_TRUE(absl::EndsWith(long_row, "o…") || absl::EndsWith(long_row, "a…")) << long_row;
  // The short one whole, its newline a space, marked whatever its case.
  EXPECT_TRUE(absl::EndsWith(short_row, "[Alpha] river é 日本")) << short_row;
}

TEST_F(CliOutputTest, ExplainShowsEachLegAndTheFusionWeight) {
  CommandResult r = Run("search --mode hybrid --explain -k 3 --collection docs 'alpha river'");
  ASSERT_EQ(r.status, 0) << r.err;
  const auto lines = Lines(r.out);
  ASSERT_EQ(lines.size(), 5u) << r.out;  // header, three hits, the fusion line
  EXPECT_TRUE(absl::StrContains(lines[0], "keyword")) << r.out;
  EXPECT_TRUE(absl::StrContains(lines[0], "vector")) << r.out;
  EXPECT_TRUE(absl::StartsWith(lines[4], "mode hybrid, fusion weight of the vector leg (alpha) "))
      << r.out;
  // "other" has neither term: the keyword leg did not return it.
  for (size_t i = 1; i < 4; ++i) {
    if (absl::StrContains(lines[i], "other")) {
      EXPECT_TRUE(absl::StrContains(lines[i], " - ")) << lines[i];
    }
  }
  // --json: the hits as JSON lines, with their explain.
  r = Run("search --json --mode hybrid --explain -k 3 --collection docs 'alpha river'");
  ASSERT_EQ(r.status, 0) << r.err;
  const auto json_lines = Lines(r.out);
  ASSERT_EQ(json_lines.size(), 3u) << r.out;
  for (const auto& l : json_lines) {
    const auto j = nlohmann::json::parse(l);
    EXPECT_TRUE(j.contains("explain") && j.contains("score") && j.contains("text")) << l;
  }
}

TEST_F(CliOutputTest, StatsAndDescribeReadAndJson) {
  CommandResult r = Run("stats");
  ASSERT_EQ(r.status, 0) << r.err;
  bool documents = false;
  for (const auto& l : Lines(r.out)) {
    EXPECT_FALSE(absl::StartsWith(l, "{")) << l;
    documents = documents || (absl::StartsWith(l, "documents ") && absl::EndsWith(l, " 3"));
  }
  EXPECT_TRUE(documents) << r.out;
  r = Run("stats --json");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(nlohmann::json::parse(r.out).at("documents"), 3) << r.out;

  r = Run("collections describe docs");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_TRUE(absl::StrContains(r.out, "\nname ")) << r.out;
  EXPECT_TRUE(absl::StrContains(r.out, "\ncount ")) << r.out;
  EXPECT_TRUE(absl::StrContains(r.out, "keyword.documents ")) << r.out;
  r = Run("collections describe --json docs");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(nlohmann::json::parse(r.out).at("count"), 3) << r.out;
}

// count, update and delete by filter: what each prints and exits with.
TEST_F(CliOutputTest, CountUpdateAndDeleteByFilter) {
  CommandResult r = Run("count --collection docs");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(nlohmann::json::parse(r.out).at("count"), 3) << r.out;
  r = Run(R"(update --collection docs long short --set '{"kind":"text","n":{"a":1}}')");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(nlohmann::json::parse(r.out).at("updated"), 2) << r.out;
  r = Run(R"(count --collection docs --filter '{"field":"kind","eq":"text"}')");
  EXPECT_EQ(nlohmann::json::parse(r.out).at("count"), 2) << r.out;
  r = Run(R"(update --collection docs --filter '{"field":"n.a","eq":1}' --remove n.a)");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(nlohmann::json::parse(r.out).at("matched"), 2) << r.out;
  r = Run("get --collection docs short");
  EXPECT_EQ(nlohmann::json::parse(r.out).at("metadata"),
            nlohmann::json::parse(R"({"kind":"text","n":{}})")) << r.out;
  r = Run("update --collection docs missing --set '{\"x\":1}'");
  EXPECT_EQ(r.status, 1) << r.err;  // a missing id, as `get` says it
  EXPECT_TRUE(absl::StrContains(r.err, "'missing' not found")) << r.err;
  r = Run("update --collection docs long --set '[1]'");
  EXPECT_EQ(r.status, 2) << r.err;
  r = Run(R"(delete --collection docs --filter '{"field":"kind","eq":"text"}')");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(nlohmann::json::parse(r.out).at("deleted"), 2) << r.out;
  r = Run("count --collection docs");
  EXPECT_EQ(nlohmann::json::parse(r.out).at("count"), 1) << r.out;
}

// A multi-tenant collection from the CLI: --tenant on ingest, search, get,
// count and list; tenants; delete --all-of-tenant.
TEST_F(CliOutputTest, TenantsFromTheCli) {
  ASSERT_EQ(Run("collections create --multi-tenant mt").status, 0);
  CommandResult r = Run("collections describe --json mt");
  EXPECT_EQ(nlohmann::json::parse(r.out).value("multi_tenant", false), true) << r.out;
  for (const std::string t : {"acme", "globex"}) {
    ASSERT_EQ(Run(absl::StrCat("ingest --collection mt --tenant ", t, " ", dir_.Sub("docs.jsonl")))
                  .status,
              0);
  }
  ASSERT_EQ(Run("update --collection mt --tenant acme short --set '{\"who\":\"acme\"}'").status, 0);
  r = Run("search --json --mode keyword --tenant globex --collection mt alpha");
  ASSERT_EQ(r.status, 0) << r.err;
  for (const std::string& line : Lines(r.out)) {
    EXPECT_FALSE(nlohmann::json::parse(line).contains("metadata") &&
                 nlohmann::json::parse(line).at("metadata").contains("who"))
        << line;  // acme's update is not globex's document
  }
  EXPECT_EQ(Lines(r.out).size(), 2u) << r.out;
  r = Run("get --collection mt --tenant acme short");
  EXPECT_EQ(nlohmann::json::parse(r.out).at("metadata").at("who"), "acme") << r.out;
  r = Run("count --collection mt");  // no tenant: refused with the server's words
  EXPECT_NE(r.status, 0);
  EXPECT_TRUE(absl::StrContains(r.err, "every call must name its tenant")) << r.err;
  r = Run("tenants --collection mt");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(Lines(r.out).size(), 2u) << r.out;
  r = Run("delete --collection mt --tenant acme --all-of-tenant");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(nlohmann::json::parse(r.out).at("deleted"), 3) << r.out;
  r = Run("count --collection mt --tenant globex");
  EXPECT_EQ(nlohmann::json::parse(r.out).at("count"), 3) << r.out;
  r = Run("list --collection mt --tenant globex");
  EXPECT_EQ(Lines(r.out).size(), 3u) << r.out;
}

// group-by, recommend and batches from the CLI.
TEST_F(CliOutputTest, GroupByRecommendAndBatch) {
  ASSERT_EQ(Run("update --collection docs long short --set '{\"g\":\"a\"}'").status, 0);
  ASSERT_EQ(Run("update --collection docs other --set '{\"g\":\"b\"}'").status, 0);
  CommandResult r = Run("search --json --group-by g --group-size 5 --collection docs alpha");
  ASSERT_EQ(r.status, 0) << r.err;
  std::vector<std::string> lines = Lines(r.out);
  ASSERT_EQ(lines.size(), 2u) << r.out;  // one line per group
  std::set<std::string> values;
  for (const auto& l : lines) {
    const auto j = nlohmann::json::parse(l);
    values.insert(j.at("value").get<std::string>());
    EXPECT_EQ(j.at("hits").size(), j.at("value") == "a" ? 2u : 1u) << l;
  }
  EXPECT_EQ(values, (std::set<std::string>{"a", "b"}));
  r = Run("search --group-by g --collection docs alpha");  // a table per group
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_TRUE(absl::StrContains(r.out, "group \"a\"")) << r.out;

  r = Run("recommend --json --collection docs --positive long --negative other -k 5");
  ASSERT_EQ(r.status, 0) << r.err;
  lines = Lines(r.out);
  ASSERT_EQ(lines.size(), 1u) << r.out;  // the examples are never hits
  EXPECT_EQ(nlohmann::json::parse(lines[0]).at("id"), "short");

  {
    std::ofstream q(dir_.Sub("queries.jsonl"));
    q << "{\"query\":\"alpha\",\"k\":2,\"mode\":\"keyword\"}\n"
      << "{\"query\":\"stone\",\"mode\":\"bogus\"}\n";
  }
  r = Run(absl::StrCat("search-batch --collection docs ", dir_.Sub("queries.jsonl")));
  EXPECT_EQ(r.status, 1) << r.err;  // one query failed
  lines = Lines(r.out);
  ASSERT_EQ(lines.size(), 2u) << r.out;
  EXPECT_EQ(nlohmann::json::parse(lines[0]).at("hits").size(), 2u) << lines[0];
  EXPECT_EQ(nlohmann::json::parse(lines[1]).at("error").at("code"), 3) << lines[1];
}

}  // namespace
}  // namespace neodb::testing
