// The readable output of `neodb search`, `stats` and `collections describe`
// (tools/neodb/text_table.cc): snippets cut at word boundaries with an
// ellipsis, never inside a UTF-8 sequence, query terms marked; aligned tables.

#include "tools/neodb/text_table.h"

#include <string>

#include "gtest/gtest.h"

namespace neodb::cli {
namespace {

// True when `s` is well-formed UTF-8.
bool ValidUtf8(const std::string& s) {
  for (size_t i = 0; i < s.size();) {
    const unsigned char c = s[i];
    const int n = c < 0x80 ? 1 : (c >> 5) == 6 ? 2 : (c >> 4) == 14 ? 3 : (c >> 3) == 30 ? 4 : 0;
    if (n == 0 || i + n > s.size()) return false;
    for (int k = 1; k < n; ++k) {
      if ((static_cast<unsigned char>(s[i + k]) & 0xC0) != 0x80) return false;
    }
    i += n;
  }
  return true;
}

TEST(QueryTermsTest, LowercasedWordsOnce) {
  EXPECT_EQ(QueryTerms("The CAT, the hat!"), (std::vector<std::string>{"the", "cat", "hat"}));
  EXPECT_EQ(QueryTerms("日本 café"), (std::vector<std::string>{"日本", "café"}));
  EXPECT_TRUE(QueryTerms(" ,.! ").empty());
}

TEST(SnippetTest, ShortTextWholeWithTermsMarked) {
  EXPECT_EQ(Snippet("The cat sat on the mat.", {"cat", "mat"}, 80, Marks{}),
            "The [cat] sat on the [mat].");
  // Case-insensitive, whole words only.
  EXPECT_EQ(Snippet("Cats and a CAT", {"cat"}, 80, Marks{}), "Cats and a [CAT]");
}

TEST(SnippetTest, CutAtWordBoundariesWithEllipsis) {
  const std::string text =
      "one two three four five six seven eight nine ten eleven twelve thirteen fourteen "
      "fifteen sixteen seventeen eighteen nineteen twenty";
  const std::string s = Snippet(text, {"twelve"}, 40, Marks{});
  EXPECT_EQ(s, "…ten eleven [twelve] thirteen fourteen…");
  EXPECT_LE(CodePoints(s) - 2, 40u);  // the marks are not text
  // No match: from the start, cut at the end only.
  EXPECT_EQ(Snippet(text, {"zebra"}, 20, Marks{}), "one two three four…");
}

TEST(SnippetTest, NeverSplitsUtf8) {
  std::string text;
  for (int i = 0; i < 30; ++i) text += "日本語 é ü ";
  text += "needle";
  for (size_t budget = 3; budget < 60; ++budget) {
    const std::string s = Snippet(text, {"needle"}, budget, Marks{});
    EXPECT_TRUE(ValidUtf8(s)) << budget << ": " << s;
    EXPECT_LE(CodePoints(s), budget + 2) << s;  // + the two mark characters
  }
  EXPECT_EQ(Snippet(text, {"needle"}, 20, Marks{}), "…é ü 日本語 é ü [needle]");
  // One word longer than the budget: cut inside it, at a code point.
  const std::string s = Snippet("ééééééééééééééééééééé rest", {}, 8, Marks{});
  EXPECT_EQ(s, "éééééé…");
  EXPECT_TRUE(ValidUtf8(s));
}

TEST(SnippetTest, OneLineWhateverTheText) {
  EXPECT_EQ(Snippet("a\n\tcat\r\n\x01 sat", {"cat"}, 80, Marks{}), "a [cat] sat");
  EXPECT_EQ(Snippet("", {"cat"}, 80, Marks{}), "");
  EXPECT_EQ(Snippet("cat", {"cat"}, 80, Marks{"<", ">"}), "<cat>");
  // Invalid UTF-8 passes through, nothing read past the end.
  EXPECT_EQ(Snippet("a \xff\xfe cat", {"cat"}, 80, Marks{}), "a \xff\xfe [cat]");
}

TEST(RenderTableTest, AlignsByCodePoints) {
  EXPECT_EQ(RenderTable({"#", "id", "score", "text"},
                        {{"1", "é", "0.5000", "x"}, {"10", "abc", "12.2500", "日本"}},
                        {true, false, true, false}),
            " #  id     score  text\n"
            " 1  é     0.5000  x\n"
            "10  abc  12.2500  日本\n");
}

TEST(RenderKeyValuesTest, FlattensAndAligns) {
  const nlohmann::json j = {{"name", "docs"}, {"count", 3}, {"keyword", {{"terms", 7}}},
                            {"query_prefix", ""}};
  EXPECT_EQ(RenderKeyValues(j),
            "count          3\n"
            "keyword.terms  7\n"
            "name           docs\n"
            "query_prefix   \"\"\n");
}

}  // namespace
}  // namespace neodb::cli
