// One line of an `neodb ingest` file (tools/neodb/json_document.h): the
// fields it maps, blank lines, and errors that name the line. Integers past
// int64 (ids and metadata) are refused instead of wrapping into negatives.
#include "tools/neodb/json_document.h"

#include "gtest/gtest.h"

namespace neodb::cli {
namespace {

TEST(IngestLineTest, MapsEveryField) {
  auto d = ParseIngestLine(
      R"({"id": 7, "text": "hi", "metadata": {"y": 2021, "s": "x", "f": 0.5, "b": true},
          "vector": [0.1, 2]})",
      "f:1");
  ASSERT_TRUE(d.ok()) << d.status();
  ASSERT_TRUE(d->has_value());
  const v1::Document& doc = **d;
  EXPECT_EQ(doc.id(), "7");
  EXPECT_EQ(doc.text(), "hi");
  EXPECT_EQ(doc.metadata().at("y").int_value(), 2021);
  EXPECT_EQ(doc.metadata().at("s").string_value(), "x");
  EXPECT_EQ(doc.metadata().at("f").double_value(), 0.5);
  EXPECT_TRUE(doc.metadata().at("b").bool_value());
  ASSERT_EQ(doc.vector_size(), 2);
  EXPECT_EQ(doc.vector(0), 0.1f);  // strtof of "0.1", not a rounded double
}

TEST(IngestLineTest, BlankLinesAreSkipped) {
  for (const char* line : {"", "  ", "\t\r"}) {
    auto d = ParseIngestLine(line, "f:1");
    ASSERT_TRUE(d.ok()) << d.status();
    EXPECT_FALSE(d->has_value());
  }
}

TEST(IngestLineTest, ErrorsNameTheLine) {
  struct Case {
    const char* line;
    const char* message;
  };
  const Case cases[] = {
      {"[1]", "f:3: expected {\"id\",\"text\",\"metadata\",\"vector\"}"},
      {R"({"text": 5})", "f:3: expected {\"id\",\"text\",\"metadata\",\"vector\"}"},
      {R"({"id": [1], "text": "x"})", "f:3: \"id\" must be a string or an int64"},
      {R"({"id": 18446744073709551615, "text": "x"})", "f:3: \"id\" must be a string or an int64"},
      {R"({"text": "x", "metadata": {"n": 9223372036854775808}})",
       "f:3: metadata 'n': integer out of int64 range"},
      {R"({"text": "x", "metadata": {"a": null}})", "f:3: metadata 'a': unsupported type"},
      {R"({"text": "x", "metadata": {"a": [1, {"b": null}]}})",
       "f:3: metadata 'a[1].b': unsupported type"},
      {R"({"text": "x", "metadata": {"t": {"datetime": "2024-13-01T00:00:00Z"}}})",
       "f:3: metadata 't': datetime '2024-13-01T00:00:00Z' is not RFC 3339 "
       "(e.g. 2024-05-01T00:00:00Z): month out of range"},
      {R"({"vector": []})", "f:3: \"vector\": expected a non-empty array of numbers"},
  };
  for (const Case& c : cases) {
    auto d = ParseIngestLine(c.line, "f:3");
    ASSERT_FALSE(d.ok()) << c.line;
    EXPECT_EQ(d.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_EQ(d.status().message(), c.message) << c.line;
  }
  auto d = ParseIngestLine("{not json", "f:3");
  ASSERT_FALSE(d.ok());
  EXPECT_EQ(std::string(d.status().message()).rfind("f:3: not JSON: ", 0), 0u) << d.status();
}

TEST(IngestLineTest, LargestInt64IdIsKept) {
  auto d = ParseIngestLine(R"({"id": 9223372036854775807, "text": "x"})", "f:1");
  ASSERT_TRUE(d.ok()) << d.status();
  EXPECT_EQ((*d)->id(), "9223372036854775807");
  d = ParseIngestLine(R"({"id": -9223372036854775808, "text": "x"})", "f:1");
  ASSERT_TRUE(d.ok()) << d.status();
  EXPECT_EQ((*d)->id(), "-9223372036854775808");
}

}  // namespace
}  // namespace neodb::cli
