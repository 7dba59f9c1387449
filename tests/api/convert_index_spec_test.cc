// IndexSpec message → factory string: tunables of 0 take the index's default,
// and a negative tunable is refused naming the field (it used to become the
// default silently).
#include "api/convert.h"
#include "gtest/gtest.h"

namespace neodb::api {
namespace {

TEST(ConvertIndexSpecTest, ZeroMeansTheDefault) {
  v1::IndexSpec s;
  s.set_type("hnsw");
  auto str = IndexSpecString(s);
  ASSERT_TRUE(str.ok()) << str.status();
  EXPECT_EQ(*str, "HNSW32");
  s.set_hnsw_m(16);
  s.set_hnsw_ef_search(128);
  str = IndexSpecString(s);
  ASSERT_TRUE(str.ok()) << str.status();
  EXPECT_EQ(*str, "HNSW16,efSearch=128");
}

TEST(ConvertIndexSpecTest, NegativeTunablesAreInvalidArgument) {
  struct Case {
    const char* type;
    void (*set)(v1::IndexSpec*);
    const char* field;
  };
  const Case cases[] = {
      {"hnsw", [](v1::IndexSpec* s) { s->set_hnsw_m(-8); }, "index.hnsw_m is -8"},
      {"hnsw", [](v1::IndexSpec* s) { s->set_hnsw_ef_construction(-1); },
       "index.hnsw_ef_construction is -1"},
      {"hnsw", [](v1::IndexSpec* s) { s->set_hnsw_ef_search(-64); }, "index.hnsw_ef_search is -64"},
      {"ivfpq", [](v1::IndexSpec* s) { s->set_ivf_nlist(-2); }, "index.ivf_nlist is -2"},
      {"ivfpq", [](v1::IndexSpec* s) { s->set_pq_m(-4); }, "index.pq_m is -4"},
      {"ivfpq", [](v1::IndexSpec* s) { s->set_ivf_nprobe(-3); }, "index.ivf_nprobe is -3"},
      // A tunable of another type is still checked: a negative is never meant.
      {"flat", [](v1::IndexSpec* s) { s->set_hnsw_m(-1); }, "index.hnsw_m is -1"},
  };
  for (const Case& c : cases) {
    v1::IndexSpec s;
    s.set_type(c.type);
    c.set(&s);
    auto str = IndexSpecString(s);
    ASSERT_FALSE(str.ok()) << c.field << " gave " << *str;
    EXPECT_EQ(str.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_EQ(std::string(str.status().message()).rfind(c.field, 0), 0u) << str.status();
  }
}

}  // namespace
}  // namespace neodb::api
