// The filter grammar on rich metadata: arrays (any-element semantics and the
// contains ops), nested paths, datetimes and geo points, as filter.h states;
// and every malformed new form is INVALID_ARGUMENT naming its path.
#include <gtest/gtest.h>

#include <cmath>

#include "db/filter.h"

namespace neodb::db {
namespace {

Metadata RichDoc() {
  Object author;
  author.fields["name"] = std::string("Ada");
  author.fields["born"] = int64_t{1815};
  Metadata m;
  m["tags"] = Array{{std::string("a"), std::string("b")}};
  m["nums"] = Array{{int64_t{1}, 5.5}};
  m["empty"] = Array{};
  m["author"] = author;
  m["published"] = DateTime{1714521600000000};  // 2024-05-01T00:00:00Z
  m["loc"] = GeoPoint{52.52, 13.405};           // Berlin
  m["year"] = int64_t{2024};
  return m;
}

struct MatchCase {
  const char* json;
  bool want;
};

class RichFilterMatchTest : public ::testing::TestWithParam<MatchCase> {};

TEST_P(RichFilterMatchTest, MatchesAsDocumented) {
  auto f = ParseFilterJson(GetParam().json);
  ASSERT_TRUE(f.ok()) << GetParam().json << ": " << f.status();
  EXPECT_EQ(f->Matches(RichDoc()), GetParam().want) << GetParam().json;
  EXPECT_EQ(Filter::Not(*f).Matches(RichDoc()), !GetParam().want) << GetParam().json;
}

INSTANTIATE_TEST_SUITE_P(
    Table, RichFilterMatchTest,
    ::testing::Values(
        // Arrays: any element.
        MatchCase{R"({"field":"tags","eq":"a"})", true},
        MatchCase{R"({"field":"tags","eq":"c"})", false},
        MatchCase{R"({"field":"tags","ne":"a"})", false},
        MatchCase{R"({"field":"tags","ne":"c"})", true},
        MatchCase{R"({"field":"nums","lt":2})", true},
        MatchCase{R"({"field":"nums","gt":5})", true},  // a different element
        MatchCase{R"({"field":"nums","gt":6})", false},
        // Each operator tests the elements on its own: 5.5 > 1 and 1 < 5.
        MatchCase{R"({"field":"nums","gt":1,"lt":5})", true},
        MatchCase{R"({"field":"tags","in":["x","b"]})", true},
        MatchCase{R"({"field":"tags","contains_any":["x","b"]})", true},
        MatchCase{R"({"field":"tags","contains_any":["x"]})", false},
        MatchCase{R"({"field":"tags","contains_all":["b","a"]})", true},
        MatchCase{R"({"field":"tags","contains_all":["a","x"]})", false},
        MatchCase{R"({"field":"nums","contains_all":[1.0,5.5]})", true},
        MatchCase{R"({"field":"empty","exists":true})", true},
        MatchCase{R"({"field":"empty","eq":1})", false},
        MatchCase{R"({"field":"empty","ne":1})", true},
        MatchCase{R"({"field":"year","contains_all":[2024]})", true},  // a scalar is [scalar]
        MatchCase{R"({"field":"year","contains_all":[2024,2025]})", false},
        // Nested paths.
        MatchCase{R"({"field":"author.name","eq":"Ada"})", true},
        MatchCase{R"({"field":"author.born","lt":1900})", true},
        MatchCase{R"({"field":"author.nope","exists":true})", false},
        MatchCase{R"({"field":"author","exists":true})", true},
        MatchCase{R"({"field":"author","eq":"Ada"})", false},
        MatchCase{R"({"field":"year.x","exists":true})", false},
        // Datetimes compare as time, never with numbers.
        MatchCase{R"({"field":"published","gte":{"datetime":"2024-05-01T00:00:00Z"}})", true},
        MatchCase{R"({"field":"published","gt":{"datetime":"2024-05-01T01:00:00+02:00"}})", true},
        MatchCase{R"({"field":"published","gt":{"datetime":"2024-05-01T00:00:00Z"}})", false},
        MatchCase{R"({"field":"published","eq":{"datetime":"2024-05-01T00:00:00.000Z"}})", true},
        MatchCase{R"({"field":"published","in":[{"datetime":"2024-05-01T00:00:00Z"}]})", true},
        MatchCase{R"({"field":"published","gte":0})", false},
        MatchCase{R"({"field":"year","lt":{"datetime":"2024-05-01T00:00:00Z"}})", false},
        // Geo.
        MatchCase{R"({"field":"loc","geo_radius":{"lat":52.5,"lon":13.4,"meters":5000}})", true},
        MatchCase{R"({"field":"loc","geo_radius":{"lat":48.8566,"lon":2.3522,"meters":800000}})",
                  false},  // Paris, 878 km away
        MatchCase{R"({"field":"loc","geo_bbox":{"top_left":{"lat":53,"lon":13},
                     "bottom_right":{"lat":52,"lon":14}}})",
                  true},
        MatchCase{R"({"field":"loc","geo_bbox":{"top_left":{"lat":53,"lon":14},
                     "bottom_right":{"lat":52,"lon":13}}})",
                  false},  // crosses the antimeridian: Berlin is outside
        MatchCase{R"({"field":"year","geo_radius":{"lat":0,"lon":0,"meters":1e9}})", false},
        MatchCase{R"({"and":[{"field":"tags","eq":"a"},{"not":{"field":"author.name","eq":"Bob"}}]})",
                  true}));

TEST(RichFilterTest, BoxAcrossTheAntimeridian) {
  Filter box = Filter::GeoBox("p", {10, 170}, {-10, -170});
  EXPECT_TRUE(box.Validate().ok());
  EXPECT_TRUE(box.Matches({{"p", GeoPoint{0, 175}}}));
  EXPECT_TRUE(box.Matches({{"p", GeoPoint{0, -175}}}));
  EXPECT_FALSE(box.Matches({{"p", GeoPoint{0, 0}}}));
  EXPECT_FALSE(box.Matches({{"p", GeoPoint{11, 175}}}));
}

struct BadCase {
  const char* json;
  const char* message_part;
};

class RichFilterErrorTest : public ::testing::TestWithParam<BadCase> {};

TEST_P(RichFilterErrorTest, IsInvalidArgumentNamingThePath) {
  auto f = ParseFilterJson(GetParam().json);
  ASSERT_FALSE(f.ok()) << GetParam().json;
  EXPECT_EQ(f.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(f.status().message().find(GetParam().message_part), std::string::npos)
      << f.status().message();
}

INSTANTIATE_TEST_SUITE_P(
    Table, RichFilterErrorTest,
    ::testing::Values(
        BadCase{R"({"and":[{"field":"a","eq":1},{"field":"l","geo_radius":{"lat":0,"lon":0,"meters":0}}]})",
                "and[1].geo_radius.meters: must be > 0"},
        BadCase{R"({"field":"l","geo_radius":{"lat":0,"lon":0,"meters":-1}})",
                "geo_radius.meters: must be > 0"},
        BadCase{R"({"field":"l","geo_radius":{"lat":91,"lon":0,"meters":1}})",
                "geo_radius.lat: must be in [-90, 90]"},
        BadCase{R"({"field":"l","geo_radius":{"lat":0,"lon":0}})", "needs 'lat', 'lon' and 'meters'"},
        BadCase{R"({"field":"l","geo_radius":{"lat":"0","lon":0,"meters":1}})",
                "geo_radius.lat: expected a number"},
        BadCase{R"({"field":"l","geo_radius":{"lat":0,"lon":0,"meters":1,"x":1}})", "unknown key 'x'"},
        BadCase{R"({"not":{"field":"l","geo_bbox":{"top_left":{"lat":0,"lon":0},"bottom_right":{"lat":1,"lon":0}}}})",
                "not.geo_bbox: top_left.lat must be >= bottom_right.lat"},
        BadCase{R"({"field":"l","geo_bbox":{"top_left":{"lat":0,"lon":200},"bottom_right":{"lat":0,"lon":0}}})",
                "geo_bbox.top_left.lon: must be in [-180, 180]"},
        BadCase{R"({"field":"l","geo_bbox":{"top_left":{"lat":0}}})", "needs 'top_left' and 'bottom_right'"},
        BadCase{R"({"field":"t","gte":{"datetime":"2024-05-01"}})", "gte.datetime"},
        BadCase{R"({"field":"t","gte":{"datetime":5}})", "gte.datetime: expected an RFC 3339 string"},
        BadCase{R"({"field":"t","gte":{"date":"2024-05-01T00:00:00Z"}})", "expected a string, number or bool"},
        BadCase{R"({"field":"t","contains_any":[]})", "'contains_any' list is empty"},
        BadCase{R"({"field":"t","contains_all":[1,"a"]})", "mixes"},
        BadCase{R"({"field":"t","contains_all":1})", "expected an array"},
        BadCase{R"({"field":"t","in":[1,{"datetime":"2024-05-01T00:00:00Z"}]})", "mixes int and datetime"}));

TEST(RichFilterTest, BuiltFiltersValidateOperands) {
  EXPECT_TRUE(Filter::GeoRadius("p", {1, 2}, 3).Validate().ok());
  EXPECT_FALSE(Filter::GeoRadius("p", {1, 2}, std::nan("")).Validate().ok());
  EXPECT_FALSE(Filter::Eq("a", GeoPoint{0, 0}).Validate().ok());
  EXPECT_FALSE(Filter::Eq("a", Array{{int64_t{1}}}).Validate().ok());
  EXPECT_FALSE(Filter::Eq("a", Object{}).Validate().ok());
  EXPECT_FALSE(Filter::Lt("a", DateTime{kMaxDateTimeMicros + 1}).Validate().ok());
  EXPECT_TRUE(Filter::ContainsAll("a", {DateTime{0}}).Validate().ok());
  EXPECT_EQ(Filter::Ge("t", DateTime{1714521600000000}).DebugString(),
            R"({"field":"t","gte":{"datetime":"2024-05-01T00:00:00Z"}})");
}

}  // namespace
}  // namespace neodb::db
