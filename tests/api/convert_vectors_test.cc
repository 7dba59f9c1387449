// The transport's vector-source conversions: CollectionSpec fields 20..23 to
// engine::VectorOptions and back into CollectionInfo, and include_vector on
// documents (the floats copied, bit for bit).
#include <cstring>
#include <limits>

#include "api/convert.h"
#include "gtest/gtest.h"

namespace neodb::api {
namespace {

TEST(ConvertVectorsTest, SpecToVectorOptions) {
  v1::CollectionSpec s;
  s.set_name("e");
  auto o = VectorOptionsFromProto(s);
  ASSERT_TRUE(o.ok());
  EXPECT_EQ(o->source, engine::VectorSource::kModel);  // unspecified = model
  s.set_vectors(v1::VECTOR_SOURCE_EXTERNAL);
  s.set_dimension(768);
  s.set_vectors_name("hf-neobert");
  s.set_query_model("default");
  o = VectorOptionsFromProto(s);
  ASSERT_TRUE(o.ok());
  EXPECT_EQ(o->source, engine::VectorSource::kExternal);
  EXPECT_EQ(o->dimension, 768u);
  EXPECT_EQ(o->name, "hf-neobert");
  EXPECT_EQ(o->query_model, "default");
  s.set_dimension(-1);
  EXPECT_EQ(VectorOptionsFromProto(s).status().code(), absl::StatusCode::kInvalidArgument);
  s.set_dimension(4);
  s.set_vectors(static_cast<v1::VectorSource>(7));  // a value from a newer client
  EXPECT_EQ(VectorOptionsFromProto(s).status().code(), absl::StatusCode::kInvalidArgument);
}

TEST(ConvertVectorsTest, InfoSaysWhereTheVectorsComeFrom) {
  engine::CollectionInfo info;
  info.spec.name = "e";
  info.spec.dimension = 4;
  info.spec.vector_source = "external";
  info.spec.model_id = "external:mine";
  v1::CollectionInfo out;
  ToProto(info, &out);
  EXPECT_EQ(out.spec().vectors(), v1::VECTOR_SOURCE_EXTERNAL);
  EXPECT_EQ(out.spec().dimension(), 4);
  EXPECT_EQ(out.spec().vectors_name(), "mine");
  EXPECT_EQ(out.spec().query_model(), "");
  EXPECT_EQ(out.model_id(), "external:mine");

  info.spec.model_id = "nb-0123";  // with the server's default model for queries
  out.Clear();
  ToProto(info, &out);
  EXPECT_EQ(out.spec().vectors_name(), "nb-0123");
  EXPECT_EQ(out.spec().query_model(), "default");
  info.spec.model_dir = "/models/x";
  out.Clear();
  ToProto(info, &out);
  EXPECT_EQ(out.spec().query_model(), "/models/x");

  info.spec.vector_source = "model";
  out.Clear();
  ToProto(info, &out);
  EXPECT_EQ(out.spec().vectors(), v1::VECTOR_SOURCE_MODEL);
  EXPECT_EQ(out.spec().dimension(), 0);  // the model's: CollectionInfo.dimension says it
  EXPECT_EQ(out.dimension(), 4);
}

TEST(ConvertVectorsTest, DocumentVectorOnlyWhenAskedAndExact) {
  db::Document d;
  d.id = "a";
  d.vector = {0.1f, std::numeric_limits<float>::denorm_min(), -0.0f, 3.4028235e38f};
  v1::Document without, with;
  ToProto(d, true, true, &without);
  EXPECT_EQ(without.vector_size(), 0);
  ToProto(d, true, true, true, &with);
  ASSERT_EQ(with.vector_size(), 4);
  EXPECT_EQ(std::memcmp(with.vector().data(), d.vector.data(), 4 * sizeof(float)), 0);
  // And through the wire format.
  v1::Document back;
  ASSERT_TRUE(back.ParseFromString(with.SerializeAsString()));
  EXPECT_EQ(std::memcmp(back.vector().data(), d.vector.data(), 4 * sizeof(float)), 0);
}

}  // namespace
}  // namespace neodb::api
