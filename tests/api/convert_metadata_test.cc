// The transport's rich metadata and filters: every new Value kind converts
// to db::Value and back unchanged; hostile values and filters are
// INVALID_ARGUMENT naming where; the new Filter kinds become the same AST as
// the JSON grammar.
#include "api/convert.h"
#include "gtest/gtest.h"

namespace neodb::api {
namespace {

TEST(ConvertMetadataTest, RichValuesRoundTrip) {
  db::Object author;
  author.fields["name"] = std::string("Ada");
  const db::Metadata m = {{"tags", db::Array{{std::string("a"), int64_t{2}, 0.5, true}}},
                          {"author", author},
                          {"published", db::DateTime{1714521600000000}},
                          {"loc", db::GeoPoint{52.52, 13.405}}};
  google::protobuf::Map<std::string, v1::Value> proto;
  ToProto(m, &proto);
  auto back = FromProto(proto, "doc");
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(*back, m);
}

TEST(ConvertMetadataTest, HostileValuesAreInvalidArgumentNamingWhere) {
  auto expect_bad = [](const v1::Value& v, const std::string& part) {
    auto r = FromProto(v, "doc 'x' metadata 'f'");
    ASSERT_FALSE(r.ok()) << part;
    EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_NE(r.status().message().find(part), std::string::npos) << r.status();
  };
  v1::Value nested;
  nested.mutable_list_value()->add_values()->mutable_list_value();
  expect_bad(nested, "metadata 'f'[0]: a list holds");
  v1::Value t;
  t.set_datetime_micros(db::kMaxDateTimeMicros + 1);
  expect_bad(t, "datetime outside");
  v1::Value g;
  g.mutable_geo_value()->set_lat(95);
  expect_bad(g, "geo point");
  v1::Value deep;
  v1::Value* at = &deep;
  for (int i = 0; i < 100; ++i) at = &(*at->mutable_object_value()->mutable_fields())["n"];
  at->set_int_value(1);
  expect_bad(deep, "nested deeper");
}

TEST(ConvertMetadataTest, NewFilterKinds) {
  v1::Filter f;
  auto* all = f.mutable_all();
  auto* c = all->add_filters()->mutable_contains_all();
  c->set_field("tags");
  c->add_values()->set_string_value("a");
  auto* r = all->add_filters()->mutable_geo_radius();
  r->set_field("loc");
  r->mutable_center()->set_lat(52.5);
  r->mutable_center()->set_lon(13.4);
  r->set_meters(5000);
  auto* range = all->add_filters()->mutable_range();
  range->set_field("published");
  range->mutable_lower()->set_datetime_micros(1714521600000000);
  bool present = false;
  auto got = FromProto(f, &present);
  ASSERT_TRUE(got.ok()) << got.status();
  const db::Metadata doc = {{"tags", db::Array{{std::string("a")}}},
                            {"loc", db::GeoPoint{52.52, 13.405}},
                            {"published", db::DateTime{1714521600000000}}};
  EXPECT_TRUE(got->Matches(doc));
  r->set_meters(0);
  got = FromProto(f, &present);
  ASSERT_FALSE(got.ok());
  EXPECT_EQ(got.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(got.status().message().find("and[1].geo_radius.meters: must be > 0"),
            std::string::npos)
      << got.status();
  v1::Filter box;
  box.mutable_geo_bbox()->set_field("loc");
  got = FromProto(box, &present);
  ASSERT_FALSE(got.ok());
  EXPECT_NE(got.status().message().find("needs top_left and bottom_right"), std::string::npos);
}

}  // namespace
}  // namespace neodb::api
