#include "engine/text_checks.h"

#include "gtest/gtest.h"

namespace neodb::engine {
namespace {

TEST(TextChecksTest, Utf8Validation) {
  EXPECT_EQ(FindInvalidUtf8("plain ascii"), std::string_view::npos);
  EXPECT_EQ(FindInvalidUtf8("caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80"), std::string_view::npos);
  EXPECT_EQ(FindInvalidUtf8("ab\xff"), 2u);            // invalid lead byte
  EXPECT_EQ(FindInvalidUtf8("a\xc3"), 1u);             // truncated
  EXPECT_EQ(FindInvalidUtf8("\xc0\xaf"), 0u);          // overlong '/'
  EXPECT_EQ(FindInvalidUtf8("x\xed\xa0\x80"), 1u);     // surrogate
  EXPECT_EQ(FindInvalidUtf8("\xf4\x90\x80\x80"), 0u);  // > U+10FFFF
}

TEST(TextChecksTest, CheckTextNamesTheProblem) {
  EXPECT_TRUE(CheckText("q", "hello").ok());
  absl::Status empty = CheckText("document 'a': text", "");
  EXPECT_EQ(empty.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(empty.message(), "document 'a': text is empty");
  absl::Status bad = CheckText("query", "ok\xfe");
  EXPECT_EQ(bad.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(bad.message().find("offset 2"), std::string::npos) << bad.message();
}

TEST(TextChecksTest, DocumentIds) {
  EXPECT_TRUE(CheckDocumentId("doc-1").ok());
  EXPECT_FALSE(CheckDocumentId("").ok());
  EXPECT_FALSE(CheckDocumentId(std::string(513, 'a')).ok());
  EXPECT_FALSE(CheckDocumentId("a\nb").ok());
  EXPECT_FALSE(CheckDocumentId("\xff").ok());
  std::string a = GenerateDocumentId(), b = GenerateDocumentId();
  EXPECT_EQ(a.size(), 32u);
  EXPECT_NE(a, b);
  EXPECT_TRUE(CheckDocumentId(a).ok());
}

}  // namespace
}  // namespace neodb::engine
