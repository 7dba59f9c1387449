#include "db/codec.h"

#include <gtest/gtest.h>

#include <random>

namespace neodb::db {
namespace {

Document SampleDoc() {
  Document d;
  d.id = std::string("doc\0with nul", 12);
  d.text = "hello wörld";
  d.metadata = {{"year", int64_t{2021}},
                {"score", 0.5},
                {"tag", std::string("a")},
                {"ok", true},
                {"neg", int64_t{-7}}};
  d.vector = {1.0f, -2.5f, 3.25f};
  d.model_id = "m1";
  d.internal_id = 123456789012ull;
  return d;
}

TEST(CodecTest, DocumentRoundTrip) {
  Document d = SampleDoc();
  auto back = DecodeDocument(EncodeDocument(d));
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(back->id, d.id);
  EXPECT_EQ(back->text, d.text);
  EXPECT_EQ(back->metadata, d.metadata);
  EXPECT_EQ(back->vector, d.vector);
  EXPECT_EQ(back->model_id, d.model_id);
  EXPECT_EQ(back->internal_id, d.internal_id);
}

TEST(CodecTest, EveryTruncationIsDataLoss) {
  std::string bytes = EncodeDocument(SampleDoc());
  for (size_t n = 0; n < bytes.size(); ++n) {
    auto r = DecodeDocument(std::string_view(bytes.data(), n));
    ASSERT_FALSE(r.ok()) << "prefix " << n;
    EXPECT_EQ(r.status().code(), absl::StatusCode::kDataLoss);
  }
  EXPECT_FALSE(DecodeDocument(bytes + "x").ok());
}

TEST(CodecTest, RandomCorruptionNeverCrashes) {
  std::string bytes = EncodeDocument(SampleDoc());
  std::mt19937 rng(7);
  int failures = 0;
  for (int i = 0; i < 2000; ++i) {
    std::string b = bytes;
    b[rng() % b.size()] = static_cast<char>(rng());
    auto r = DecodeDocument(b);  // must not crash or over-read (ASan build checks)
    if (!r.ok()) {
      EXPECT_EQ(r.status().code(), absl::StatusCode::kDataLoss);
      ++failures;
    }
  }
  EXPECT_GT(failures, 0);
}

TEST(CodecTest, HugeLengthPrefixIsRejected) {
  std::string bytes = "\x01\x05";   // version, internal id 5
  bytes += "\xff\xff\xff\xff\x0f";  // id length 2^32-1
  EXPECT_EQ(DecodeDocument(bytes).status().code(), absl::StatusCode::kDataLoss);
}

TEST(CodecTest, SpecAndChangelogRoundTrip) {
  CollectionSpec spec;
  spec.name = "c-1";
  spec.dimension = 768;
  spec.index_spec = "HNSW32";
  spec.metric = "l2";
  spec.pooling = "cls";
  spec.query_instruction = "query: ";
  spec.overflow = "chunk";
  spec.model_id = "abc";
  spec.created_at_micros = 42;
  auto s = DecodeCollectionSpec(EncodeCollectionSpec(spec));
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ(s->name, spec.name);
  EXPECT_EQ(s->dimension, 768u);
  EXPECT_EQ(s->index_spec, "HNSW32");
  EXPECT_EQ(s->metric, "l2");
  EXPECT_EQ(s->pooling, "cls");
  EXPECT_EQ(s->query_instruction, "query: ");
  EXPECT_EQ(s->overflow, "chunk");
  EXPECT_EQ(s->model_id, "abc");
  EXPECT_EQ(s->created_at_micros, 42);

  ChangelogRecord rec{9, ChangeOp::kDelete, "c", "d", 0, 77};
  auto r = DecodeChangelogRecord(EncodeChangelogRecord(rec));
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->seq, 9u);
  EXPECT_EQ(r->op, ChangeOp::kDelete);
  EXPECT_EQ(r->previous_internal_id, 77u);
  std::string bad = EncodeChangelogRecord(rec);
  bad[2] = 9;  // op byte
  EXPECT_FALSE(DecodeChangelogRecord(bad).ok());
}

// The v6 record of `spec`: its v7 encoding without the trailing
// multi_tenant byte.
std::string AsV6(const CollectionSpec& spec) {
  std::string v7 = EncodeCollectionSpec(spec);
  std::string v6 = v7.substr(0, v7.size() - 1);
  v6[0] = 6;
  return v6;
}

// The v5 record of `spec`: its v6 encoding without the trailing
// previous_model_dir (length-prefixed string, under 128 bytes here).
std::string AsV5(const CollectionSpec& spec) {
  std::string v6 = AsV6(spec);
  std::string v5 = v6.substr(0, v6.size() - (1 + spec.previous_model_dir.size()));
  v5[0] = 5;
  return v5;
}

// The v4 record of `spec`: its v5 encoding without the trailing fusion
// (length-prefixed string) and fusion_alpha (8 bytes).
std::string AsV4(const CollectionSpec& spec) {
  std::string v5 = AsV5(spec);
  std::string v4 = v5.substr(0, v5.size() - (1 + spec.fusion.size() + 8));
  v4[0] = 4;
  return v4;
}

TEST(CodecTest, SpecV3FieldsRoundTripAndOlderVersionsGetDefaults) {
  CollectionSpec spec;
  spec.name = "ext";
  spec.dimension = 3;
  spec.model_id = "external:mine";
  spec.model_dir = "/m";
  spec.engine_state = "state";
  spec.vector_source = "external";
  spec.analyzer = "simple";
  spec.bm25_k1 = 1.2;
  spec.bm25_b = 0.75;
  spec.title_field = "title";
  spec.title_weight = 2.5;
  spec.precision = "int8";
  const std::string v4 = AsV4(spec);
  // A v3 record is the v4 one without its trailing precision "int8" (1 + 4).
  std::string v3 = v4.substr(0, v4.size() - 5);
  v3[0] = 3;
  auto s = DecodeCollectionSpec(v3);
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ(s->vector_source, "external");
  EXPECT_EQ(s->model_dir, "/m");
  EXPECT_EQ(s->engine_state, "state");
  EXPECT_EQ(s->analyzer, "simple");
  EXPECT_EQ(s->bm25_k1, 1.2);
  EXPECT_EQ(s->bm25_b, 0.75);
  EXPECT_EQ(s->title_field, "title");
  EXPECT_EQ(s->title_weight, 2.5);
  EXPECT_EQ(s->precision, "f32");

  // A v2 record is the v3 one without its suffix: vector_source "external"
  // (1 + 8 bytes), analyzer "simple" (1 + 6), k1, b (8 each), title_field
  // "title" (1 + 5), title_weight (8).
  std::string v2 = v3.substr(0, v3.size() - (9 + 7 + 8 + 8 + 6 + 8));
  v2[0] = 2;
  auto old = DecodeCollectionSpec(v2);
  ASSERT_TRUE(old.ok()) << old.status();
  EXPECT_EQ(old->name, "ext");
  EXPECT_EQ(old->engine_state, "state");
  EXPECT_EQ(old->vector_source, "model");
  EXPECT_EQ(old->analyzer, "english");
  EXPECT_EQ(old->bm25_k1, 0.9);
  EXPECT_EQ(old->bm25_b, 0.4);
  EXPECT_EQ(old->title_field, "");
  EXPECT_EQ(old->title_weight, 1.0);
  EXPECT_EQ(old->precision, "f32");
  // The v3 record cut short is corrupt, not an older record.
  EXPECT_EQ(DecodeCollectionSpec(v3.substr(0, v3.size() - 1)).status().code(),
            absl::StatusCode::kDataLoss);
  EXPECT_FALSE(DecodeCollectionSpec(v3.substr(0, v3.size() - 4)).ok());
}

TEST(CodecTest, SpecV4PrecisionRoundTripsAndOlderSpecsDecodeAsF32) {
  CollectionSpec spec;
  spec.name = "p";
  spec.dimension = 8;
  spec.model_dir = "/m";
  spec.analyzer = "simple";
  spec.title_field = "title";
  spec.precision = "bf16";
  const std::string v4 = AsV4(spec);
  ASSERT_EQ(v4[0], 4);
  auto s = DecodeCollectionSpec(v4);
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ(s->precision, "bf16");
  EXPECT_EQ(s->model_dir, "/m");
  // The v3 fields stay where they were: precision comes after them.
  EXPECT_EQ(s->analyzer, "simple");
  EXPECT_EQ(s->title_field, "title");
  // A v3 record: the same bytes without the trailing precision (length 4).
  std::string v3 = v4.substr(0, v4.size() - 5);
  v3[0] = 3;
  s = DecodeCollectionSpec(v3);
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ(s->precision, "f32");
  EXPECT_EQ(s->analyzer, "simple");
  EXPECT_EQ(s->title_field, "title");
  v3[0] = 4;  // a v4 record cut short is corrupt, not f32
  EXPECT_EQ(DecodeCollectionSpec(v3).status().code(), absl::StatusCode::kDataLoss);
  // An unknown later version is refused, not guessed at.
  std::string v8 = EncodeCollectionSpec(spec);
  v8[0] = 8;
  EXPECT_FALSE(DecodeCollectionSpec(v8).ok());
}

TEST(CodecTest, SpecV5FusionRoundTripsAndOlderSpecsDecodeAsAdaptive) {
  CollectionSpec spec;
  spec.name = "f";
  spec.dimension = 8;
  spec.precision = "int8";
  spec.fusion = "weighted";
  spec.fusion_alpha = 0.3;
  const std::string v5 = AsV5(spec);
  ASSERT_EQ(v5[0], 5);
  auto s = DecodeCollectionSpec(v5);
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ(s->fusion, "weighted");
  EXPECT_EQ(s->fusion_alpha, 0.3);
  EXPECT_EQ(s->precision, "int8");  // the v4 field stays where it was
  // A v4 record (no fusion fields) decodes with the defaults.
  s = DecodeCollectionSpec(AsV4(spec));
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ(s->fusion, "adaptive");
  EXPECT_EQ(s->fusion_alpha, 0.5);
  EXPECT_EQ(s->precision, "int8");
  // A v5 record cut short (in its alpha, or before it) is corrupt.
  EXPECT_EQ(DecodeCollectionSpec(v5.substr(0, v5.size() - 1)).status().code(),
            absl::StatusCode::kDataLoss);
  EXPECT_EQ(DecodeCollectionSpec(v5.substr(0, v5.size() - 8)).status().code(),
            absl::StatusCode::kDataLoss);
}

TEST(CodecTest, SpecV6PreviousModelDirRoundTripsAndOlderSpecsHaveNone) {
  CollectionSpec spec;
  spec.name = "r";
  spec.dimension = 8;
  spec.model_dir = "/models/adapted";
  spec.previous_model_dir = "/srv/neodb/default_model";
  spec.fusion = "rrf";
  const std::string v6 = AsV6(spec);
  ASSERT_EQ(v6[0], 6);
  auto s = DecodeCollectionSpec(v6);
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ(s->previous_model_dir, "/srv/neodb/default_model");
  EXPECT_EQ(s->model_dir, "/models/adapted");
  EXPECT_EQ(s->fusion, "rrf");  // the v5 field stays where it was
  s = DecodeCollectionSpec(AsV5(spec));
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ(s->previous_model_dir, "");
  EXPECT_EQ(s->fusion, "rrf");
  // A v6 record cut short (in its previous_model_dir, or before it) is corrupt.
  EXPECT_EQ(DecodeCollectionSpec(v6.substr(0, v6.size() - 1)).status().code(),
            absl::StatusCode::kDataLoss);
  EXPECT_EQ(DecodeCollectionSpec(AsV5(spec).replace(0, 1, 1, '\x06')).status().code(),
            absl::StatusCode::kDataLoss);
}

TEST(CodecTest, SpecV7MultiTenantRoundTripsAndOlderSpecsAreSingleTenant) {
  CollectionSpec spec;
  spec.name = "saas";
  spec.dimension = 8;
  spec.previous_model_dir = "/m/old";
  spec.multi_tenant = true;
  const std::string v7 = EncodeCollectionSpec(spec);
  ASSERT_EQ(v7[0], 7);
  auto s = DecodeCollectionSpec(v7);
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_TRUE(s->multi_tenant);
  EXPECT_EQ(s->previous_model_dir, "/m/old");  // the v6 field stays where it was
  s = DecodeCollectionSpec(AsV6(spec));
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_FALSE(s->multi_tenant);
  EXPECT_EQ(s->previous_model_dir, "/m/old");
  // A flag byte other than 0 or 1, or a v7 record without it, is corrupt.
  std::string bad = v7;
  bad.back() = 2;
  EXPECT_EQ(DecodeCollectionSpec(bad).status().code(), absl::StatusCode::kDataLoss);
  EXPECT_EQ(DecodeCollectionSpec(v7.substr(0, v7.size() - 1)).status().code(),
            absl::StatusCode::kDataLoss);
}

TEST(CodecTest, BigEndianSortsNumerically) {
  EXPECT_LT(EncodeBigEndian64(255), EncodeBigEndian64(256));
  EXPECT_EQ(*DecodeBigEndian64(EncodeBigEndian64(0x0102030405060708ull)), 0x0102030405060708ull);
  EXPECT_FALSE(DecodeBigEndian64("abc").ok());
}

}  // namespace
}  // namespace neodb::db
