#include "db/filter.h"

#include <gtest/gtest.h>

namespace neodb::db {
namespace {

const Metadata kDoc = {
    {"year", int64_t{2021}}, {"score", 0.75}, {"tag", std::string("b")}, {"draft", false}};

struct MatchCase {
  const char* json;
  bool want;
};

class FilterMatchTest : public ::testing::TestWithParam<MatchCase> {};

TEST_P(FilterMatchTest, MatchesAsDocumented) {
  auto f = ParseFilterJson(GetParam().json);
  ASSERT_TRUE(f.ok()) << GetParam().json << ": " << f.status();
  EXPECT_EQ(f->Matches(kDoc), GetParam().want) << GetParam().json;
}

INSTANTIATE_TEST_SUITE_P(
    Table, FilterMatchTest,
    ::testing::Values(
        MatchCase{R"({"field":"year","eq":2021})", true},
        MatchCase{R"({"field":"year","eq":2021.0})", true},   // int vs double numerically
        MatchCase{R"({"field":"year","eq":"2021"})", false},  // string never equals int
        MatchCase{R"({"field":"year","ne":2020})", true},
        MatchCase{R"({"field":"missing","ne":1})", true},  // ne == not eq
        MatchCase{R"({"field":"missing","eq":1})", false},
        MatchCase{R"({"field":"year","gte":2021})", true},
        MatchCase{R"({"field":"year","gt":2021})", false},
        MatchCase{R"({"field":"year","lt":2021.5})", true},
        MatchCase{R"({"field":"year","lte":2020})", false},
        MatchCase{R"({"field":"year","gte":2020,"lt":2022})", true},
        MatchCase{R"({"field":"year","gte":2020,"lt":2021})", false},
        MatchCase{R"({"field":"score","gt":0.5})", true},
        MatchCase{R"({"field":"score","lt":1})", true},
        MatchCase{R"({"field":"tag","gt":"a"})", true},  // strings compare bytewise
        MatchCase{R"({"field":"tag","lt":1})", false},   // incomparable types
        MatchCase{R"({"field":"tag","in":["a","b"]})", true},
        MatchCase{R"({"field":"tag","in":["c"]})", false},
        MatchCase{R"({"field":"year","in":[1,2021.0]})", true},
        MatchCase{R"({"field":"draft","eq":false})", true},
        MatchCase{R"({"field":"draft","in":[true]})", false},
        MatchCase{R"({"field":"draft","exists":true})", true},
        MatchCase{R"({"field":"nope","exists":false})", true},
        MatchCase{R"({"and":[{"field":"year","gte":2020},{"field":"tag","in":["a","b"]}]})", true},
        MatchCase{R"({"and":[{"field":"year","gte":2022},{"field":"tag","in":["a","b"]}]})", false},
        MatchCase{R"({"or":[{"field":"year","gte":2022},{"field":"tag","eq":"b"}]})", true},
        MatchCase{R"({"or":[{"field":"year","gte":2022},{"field":"tag","eq":"c"}]})", false},
        MatchCase{R"({"not":{"field":"tag","eq":"b"}})", false}));

struct BadCase {
  const char* json;
  const char* message_part;
};

class FilterParseErrorTest : public ::testing::TestWithParam<BadCase> {};

TEST_P(FilterParseErrorTest, IsInvalidArgumentNamingTheProblem) {
  auto f = ParseFilterJson(GetParam().json);
  ASSERT_FALSE(f.ok()) << GetParam().json;
  EXPECT_EQ(f.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(f.status().message().find(GetParam().message_part), std::string::npos)
      << f.status().message();
}

INSTANTIATE_TEST_SUITE_P(
    Table, FilterParseErrorTest,
    ::testing::Values(BadCase{"", "not valid JSON"}, BadCase{"{", "not valid JSON"},
                      BadCase{"[]", "expected an object"}, BadCase{"{}", "empty object"},
                      BadCase{R"({"field":"a"})", "no operator"},
                      BadCase{R"({"field":"a","like":"x"})", "unknown operator 'like'"},
                      BadCase{R"({"field":"a","like":null})", "unknown operator 'like'"},
                      BadCase{R"({"field":"","eq":1})", "non-empty string"},
                      BadCase{R"({"field":"a","eq":null})", "expected a string, number or bool"},
                      BadCase{R"({"field":"a","eq":[1]})", "expected a string, number or bool"},
                      BadCase{R"({"field":"a","in":[]})", "empty"},
                      BadCase{R"({"field":"a","in":[1,"x"]})", "mixes"},
                      BadCase{R"({"field":"a","in":3})", "expected an array"},
                      BadCase{R"({"field":"a","gt":true})", "bool"},
                      BadCase{R"({"field":"a","exists":1})", "true or false"},
                      BadCase{R"({"and":[]})", "at least one"},
                      BadCase{R"({"and":{}})", "expected an array"},
                      BadCase{R"({"and":[{"field":"a","eq":1}, 5]})", "and[1]"},
                      BadCase{R"({"and":[{"field":"a","eq":1}],"x":1})", "only key"},
                      BadCase{R"({"field":"a","eq":18446744073709551615})", "int64"}));

TEST(FilterTest, DepthIsCapped) {
  std::string deep;
  for (int i = 0; i < 40; ++i) deep += R"({"not":)";
  deep += R"({"field":"a","eq":1})";
  for (int i = 0; i < 40; ++i) deep += "}";
  auto f = ParseFilterJson(deep);
  ASSERT_FALSE(f.ok());
  EXPECT_NE(f.status().message().find("deeper"), std::string::npos) << f.status();
  // Absurd nesting is rejected before parsing (no stack exhaustion).
  std::string absurd(100000, '[');
  EXPECT_EQ(ParseFilterJson(absurd).status().code(), absl::StatusCode::kInvalidArgument);
}

TEST(FilterTest, BuiltFiltersValidate) {
  EXPECT_TRUE(Filter::And({Filter::Eq("a", int64_t{1}), Filter::Exists("b")}).Validate().ok());
  EXPECT_FALSE(Filter::Lt("a", true).Validate().ok());
  EXPECT_FALSE(Filter::In("a", {}).Validate().ok());
  EXPECT_FALSE(Filter::Or({}).Validate().ok());
  EXPECT_FALSE(Filter::Eq("", int64_t{1}).Validate().ok());
  EXPECT_FALSE(Filter::Eq("a", std::nan("")).Validate().ok());
  Filter f = Filter::Or({Filter::Eq("tag", std::string("x")), Filter::Ge("score", 0.7)});
  EXPECT_TRUE(f.Matches(kDoc));
  EXPECT_EQ(f.DebugString(), R"({"or":[{"field":"tag","eq":"x"},{"field":"score","gte":0.7}]})");
}

}  // namespace
}  // namespace neodb::db
