// Rich metadata: arrays, nested objects, datetimes and geo points encode and
// decode (records written before them still decode unchanged), every limit
// of ValidateMetadata is enforced with the field's path in the message, and
// RFC 3339 parses and formats.
#include <gtest/gtest.h>

#include <string>

#include "db/codec.h"
#include "db/metadata.h"
#include "db/metadata_types.h"

namespace neodb::db {
namespace {

// A document encoded by db/codec.cc as it was before the new types (commit
// ede123b, compiled on its own): id "doc-1", internal id 42, text "hello",
// model "m", metadata {ok: true, score: 0.5, tag: "a", year: 2021}, vector
// {1, -2.5}. It must keep decoding to exactly that.
constexpr char kOldRecord[] =
    "\x01\x2a\x05\x64\x6f\x63\x2d\x31\x05\x68\x65\x6c\x6c\x6f\x01\x6d\x04\x02\x6f\x6b\x03\x01"
    "\x05\x73\x63\x6f\x72\x65\x02\x00\x00\x00\x00\x00\x00\xe0\x3f\x03\x74\x61\x67\x00\x01\x61"
    "\x04\x79\x65\x61\x72\x01\xe5\x07\x00\x00\x00\x00\x00\x00\x02\x00\x00\x80\x3f\x00\x00\x20"
    "\xc0";

TEST(MetadataCodecTest, RecordFromBeforeTheNewTypesDecodesUnchanged) {
  const std::string bytes(kOldRecord, sizeof(kOldRecord) - 1);
  auto d = DecodeDocument(bytes);
  ASSERT_TRUE(d.ok()) << d.status();
  EXPECT_EQ(d->id, "doc-1");
  EXPECT_EQ(d->internal_id, 42u);
  EXPECT_EQ(d->text, "hello");
  EXPECT_EQ(d->model_id, "m");
  const Metadata want = {{"ok", true},
                         {"score", 0.5},
                         {"tag", std::string("a")},
                         {"year", int64_t{2021}}};
  EXPECT_EQ(d->metadata, want);
  EXPECT_EQ(d->vector, (std::vector<float>{1.0f, -2.5f}));
  // And the new encoder writes old types byte for byte as before.
  EXPECT_EQ(EncodeDocument(*d), bytes);
}

Document RichDoc() {
  Document d;
  d.id = "rich";
  d.internal_id = 7;
  d.text = "t";
  Object author;
  author.fields["name"] = std::string("Ada");
  Object address;
  address.fields["city"] = std::string("London");
  address.fields["zip"] = int64_t{12345};
  author.fields["address"] = address;
  d.metadata = {
      {"tags", Array{{std::string("a"), std::string("b")}}},
      {"mixed", Array{{int64_t{1}, 2.5, true, std::string("x")}}},
      {"empty", Array{}},
      {"author", author},
      {"published", DateTime{1714521600000000}},
      {"loc", GeoPoint{52.52, 13.405}},
      {"year", int64_t{2024}},
  };
  d.vector = {0.5f};
  return d;
}

TEST(MetadataCodecTest, NewTypesRoundTrip) {
  const Document d = RichDoc();
  ASSERT_TRUE(ValidateMetadata(d.metadata).ok()) << ValidateMetadata(d.metadata);
  auto back = DecodeDocument(EncodeDocument(d));
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(back->metadata, d.metadata);
  EXPECT_EQ(back->vector, d.vector);
}

TEST(MetadataCodecTest, EveryTruncationOfNewTypesIsDataLoss) {
  const std::string bytes = EncodeDocument(RichDoc());
  for (size_t n = 0; n < bytes.size(); ++n) {
    auto r = DecodeDocument(std::string_view(bytes.data(), n));
    ASSERT_FALSE(r.ok()) << n;
    EXPECT_EQ(r.status().code(), absl::StatusCode::kDataLoss);
  }
}

TEST(MetadataCodecTest, DeepNestingInACorruptRecordIsDataLossNotAStackOverflow) {
  // version, internal id, id, text, model, one field "a" holding 100000
  // nested one-item arrays.
  std::string bytes("\x01\x01\x00\x00\x00\x01\x01" "a", 8);
  for (int i = 0; i < 100000; ++i) bytes += std::string("\x04\x01", 2);
  auto r = DecodeDocument(bytes);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), absl::StatusCode::kDataLoss);
}

void ExpectInvalid(const Metadata& m, const std::string& part) {
  absl::Status s = ValidateMetadata(m);
  ASSERT_FALSE(s.ok()) << part;
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find(part), std::string::npos) << s.message();
}

TEST(MetadataValidateTest, EveryLimitNamesTheFieldPath) {
  ExpectInvalid({{"a.b", int64_t{1}}}, "'a.b': a field name may not contain '.'");
  Object inner;
  inner.fields["x.y"] = int64_t{1};
  ExpectInvalid({{"a", inner}}, "'a.x.y'");
  Array big;
  big.items.assign(kMaxMetadataArrayItems + 1, Value(int64_t{1}));
  ExpectInvalid({{"tags", big}}, "'tags': array of 1025 items");
  Array nested;
  nested.items.push_back(Array{{int64_t{1}}});
  ExpectInvalid({{"tags", nested}}, "'tags[0]': an array holds");
  Array with_nan{{1.0, std::nan("")}};
  ExpectInvalid({{"xs", with_nan}}, "'xs[1]': is not a finite number");
  ExpectInvalid({{"t", DateTime{kMaxDateTimeMicros + 1}}}, "'t': datetime outside");
  ExpectInvalid({{"t", DateTime{kMinDateTimeMicros - 1}}}, "'t': datetime outside");
  ExpectInvalid({{"loc", GeoPoint{91, 0}}}, "'loc': geo latitude");
  ExpectInvalid({{"loc", GeoPoint{0, -180.5}}}, "'loc': geo longitude");
  ExpectInvalid({{"loc", GeoPoint{std::nan(""), 0}}}, "'loc': geo latitude");
  // Depth: kMaxMetadataDepth objects nest; one more is refused, by path.
  Value v = int64_t{1};
  for (int i = 0; i < kMaxMetadataDepth; ++i) {
    Object o;
    o.fields["n"] = v;
    v = o;
  }
  EXPECT_TRUE(ValidateMetadata({{"n", v}}).ok());
  Object o;
  o.fields["n"] = v;
  ExpectInvalid({{"n", Value(o)}}, "'n.n.n.n.n.n.n.n.n': objects nest deeper");
  // Fields count at every level.
  Object wide;
  for (size_t i = 0; i < kMaxMetadataFields; ++i) wide.fields["f" + std::to_string(i)] = true;
  ExpectInvalid({{"w", wide}}, "more than 256 fields");
  // Total array items and string bytes.
  Metadata many;
  Array full;
  full.items.assign(kMaxMetadataArrayItems, Value(int64_t{1}));
  for (size_t i = 0; i <= kMaxMetadataTotalItems / kMaxMetadataArrayItems; ++i) {
    many["a" + std::to_string(i)] = full;
  }
  ExpectInvalid(many, "metadata arrays exceed");
  Metadata strings;
  for (int i = 0; i < 17; ++i) {
    strings["s" + std::to_string(i)] = std::string(kMaxMetadataStringBytes, 'x');
  }
  ExpectInvalid(strings, "metadata strings exceed");
}

TEST(MetadataPathTest, DottedPathsWalkObjectsAndAWholeKeyWins) {
  const Document d = RichDoc();
  const Value* v = FindPath(d.metadata, "author.address.city");
  ASSERT_NE(v, nullptr);
  EXPECT_EQ(*v, Value(std::string("London")));
  EXPECT_EQ(FindPath(d.metadata, "author.nope"), nullptr);
  EXPECT_EQ(FindPath(d.metadata, "year.x"), nullptr);
  EXPECT_EQ(FindPath(d.metadata, "tags.0"), nullptr);  // arrays are not walked
  Object a;
  a.fields["b"] = int64_t{2};
  Metadata legacy = {{"a.b", int64_t{1}}, {"a", a}};
  EXPECT_EQ(*FindPath(legacy, "a.b"), Value(int64_t{1}));
}

TEST(DateTimeTest, ParsesRfc3339IntoUtcMicros) {
  struct Case {
    const char* text;
    int64_t micros;
  };
  for (const Case& c : {Case{"1970-01-01T00:00:00Z", 0},
                        Case{"2024-05-01T00:00:00Z", 1714521600000000},
                        Case{"2024-05-01T02:00:00+02:00", 1714521600000000},
                        Case{"2024-04-30t19:30:00.5-04:30", 1714521600500000},
                        Case{"1969-12-31T23:59:59.999999Z", -1},
                        Case{"2000-02-29T12:00:00.1234567Z", 951825600123456},
                        Case{"0001-01-01T00:00:00Z", kMinDateTimeMicros},
                        Case{"9999-12-31T23:59:59.999999Z", kMaxDateTimeMicros}}) {
    auto t = ParseDateTime(c.text);
    ASSERT_TRUE(t.ok()) << c.text << ": " << t.status();
    EXPECT_EQ(t->micros, c.micros) << c.text;
  }
  EXPECT_EQ(FormatDateTime(DateTime{1714521600000000}), "2024-05-01T00:00:00Z");
  EXPECT_EQ(FormatDateTime(DateTime{-1}), "1969-12-31T23:59:59.999999Z");
  EXPECT_EQ(FormatDateTime(DateTime{kMinDateTimeMicros}), "0001-01-01T00:00:00Z");
  EXPECT_EQ(FormatDateTime(DateTime{kMaxDateTimeMicros}), "9999-12-31T23:59:59.999999Z");
  for (const char* bad :
       {"", "2024-05-01", "2024-05-01T00:00:00", "2024-13-01T00:00:00Z", "2023-02-29T00:00:00Z",
        "2024-05-01T24:00:00Z", "2024-05-01T23:59:60Z", "2024-05-01T00:00:00.Z",
        "2024-05-01T00:00:00+2:00", "0000-01-01T00:00:00Z", "0001-01-01T00:00:00+00:01",
        "2024-05-01T00:00:00.1234567890Z", "2024-05-01T00:00:00Zjunk", "2024-05-01T00:00:00+01:00Z", "２０２４-05-01T00:00:00Z"}) {
    auto t = ParseDateTime(bad);
    ASSERT_FALSE(t.ok()) << bad;
    EXPECT_EQ(t.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_NE(t.status().message().find("RFC 3339"), std::string::npos) << t.status();
  }
  // Round trip over a spread of instants.
  for (int64_t m = kMinDateTimeMicros; m < kMaxDateTimeMicros - 7777777777777LL * 1000;
       m += 7777777777777LL * 1000 + 12345) {
    auto t = ParseDateTime(FormatDateTime(DateTime{m}));
    ASSERT_TRUE(t.ok()) << m;
    EXPECT_EQ(t->micros, m);
  }
}

TEST(GeoTest, HaversineDistances) {
  EXPECT_DOUBLE_EQ(GeoDistanceMeters({0, 0}, {0, 0}), 0);
  // A degree of latitude is R * pi / 180.
  EXPECT_NEAR(GeoDistanceMeters({0, 0}, {1, 0}), kEarthRadiusMeters * M_PI / 180, 1e-6);
  EXPECT_NEAR(GeoDistanceMeters({90, 0}, {-90, 0}), kEarthRadiusMeters * M_PI, 1e-3);
  // Berlin - Paris, about 878 km.
  EXPECT_NEAR(GeoDistanceMeters({52.52, 13.405}, {48.8566, 2.3522}), 877.5e3, 2e3);
  // Across the antimeridian.
  EXPECT_NEAR(GeoDistanceMeters({0, 179.5}, {0, -179.5}), kEarthRadiusMeters * M_PI / 180, 1e-6);
}

}  // namespace
}  // namespace neodb::db
