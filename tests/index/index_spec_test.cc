// Index specs with tunables: parsed, validated, canonical (defaults
// omitted), and kept through Serialize/DeserializeIndex, so a collection's
// efConstruction/efSearch/nprobe persist with it and its snapshots.
#include <random>

#include "gtest/gtest.h"
#include "index/index_factory.h"

namespace neodb::index {
namespace {

TEST(IndexSpecTest, TunablesAreCanonicalAndValidated) {
  auto spec_of = [](const char* s, int dim = 16) {
    auto i = MakeIndex(s, dim, Metric::kCosine);
    return i.ok() ? (*i)->spec() : std::string(i.status().message());
  };
  EXPECT_EQ(spec_of("HNSW32"), "HNSW32");
  EXPECT_EQ(spec_of("HNSW32,Flat"), "HNSW32");
  EXPECT_EQ(spec_of("HNSW32,efConstruction=40,efSearch=64"), "HNSW32");  // the defaults
  EXPECT_EQ(spec_of("HNSW16,efSearch=128,efConstruction=200"),
            "HNSW16,efConstruction=200,efSearch=128");
  EXPECT_EQ(spec_of("HNSW8,exactBelow=0"), "HNSW8,exactBelow=0");
  EXPECT_EQ(spec_of("IVF64,PQ8,nprobe=12"), "IVF64,PQ8,nprobe=12");
  for (const char* bad :
       {"HNSW32,efSearch=0", "HNSW32,efSearch=5000", "HNSW32,nprobe=4", "IVF64,PQ8,efSearch=3",
        "Flat,efSearch=3", "HNSW32,efSearch", "HNSW32,bogus=1"}) {
    EXPECT_EQ(ValidateIndexSpec(bad, 16).code(), absl::StatusCode::kInvalidArgument) << bad;
  }
}

TEST(IndexSpecTest, TunablesSurviveSerialization) {
  for (const char* s : {"HNSW16,efConstruction=100,efSearch=200", "IVF4,PQ4,nprobe=3"}) {
    auto index = MakeIndex(s, 8, Metric::kL2);
    ASSERT_TRUE(index.ok()) << index.status();
    std::mt19937 rng(1);
    std::normal_distribution<float> n;
    std::vector<int64_t> ids;
    std::vector<float> v;
    for (int i = 0; i < 300; ++i) {
      ids.push_back(i);
      for (int d = 0; d < 8; ++d) v.push_back(n(rng));
    }
    ASSERT_TRUE((*index)->Add(ids, v).ok());
    auto bytes = (*index)->Serialize();
    ASSERT_TRUE(bytes.ok());
    auto back = DeserializeIndex(*bytes);
    ASSERT_TRUE(back.ok()) << back.status();
    EXPECT_EQ((*back)->spec(), s);
    EXPECT_EQ((*back)->size(), 300u);
  }
}

}  // namespace
}  // namespace neodb::index
