// Crafted HNSW and IVF-PQ payloads (valid checksums, hostile FAISS bytes) are
// DATA_LOSS, never a huge allocation, a graph whose searches read out of
// bounds, or searches that return ids the index does not hold
// (index/faiss_checks.h). The fuzzer found the first of each
// (tests/fuzz/corpus/index_snapshot/regress_*).
#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "index/index_factory.h"

namespace neodb::index {
namespace {

// The payload of a small HNSW index and where its FAISS bytes start.
struct Payload {
  std::string bytes;
  size_t faiss = 0;  // offset of the FAISS blob in `bytes`
};

Payload SmallHnsw() {
  auto index = MakeIndex("HNSW8", 4, Metric::kL2);
  EXPECT_TRUE(index.ok());
  std::vector<int64_t> ids;
  std::vector<float> v;
  for (int i = 0; i < 20; ++i) {
    ids.push_back(i);
    for (int d = 0; d < 4; ++d) v.push_back(static_cast<float>((i * 7 + d * 3) % 11));
  }
  EXPECT_TRUE((*index)->Add(ids, v).ok());
  auto bytes = (*index)->Serialize();
  EXPECT_TRUE(bytes.ok());
  Payload p{*bytes, 0};
  // Our header: magic, spec (u64 length + bytes), u32 dim, u8 metric; then
  // the FAISS blob as one length-prefixed string.
  uint64_t spec_len;
  std::memcpy(&spec_len, p.bytes.data() + 8, 8);
  p.faiss = 8 + 8 + spec_len + 4 + 1 + 8;
  EXPECT_EQ(p.bytes.substr(p.faiss, 4), "IHNf");
  return p;
}

// FAISS's IndexHNSWFlat: "IHNf", header (d, ntotal, 2 unused, is_trained,
// metric), then the HNSW vectors, the first being assign_probas' length.
constexpr size_t kFirstVectorLength = 4 + 4 + 8 + 8 + 8 + 1 + 4;

uint64_t U64At(const std::string& s, size_t at) {
  uint64_t v;
  std::memcpy(&v, s.data() + at, 8);
  return v;
}
void SetU64(std::string* s, size_t at, uint64_t v) { std::memcpy(s->data() + at, &v, 8); }

TEST(HnswPayloadCheckTest, ValidPayloadLoads) {
  Payload p = SmallHnsw();
  auto loaded = DeserializeIndex(p.bytes);
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  EXPECT_EQ((*loaded)->size(), 20u);
}

TEST(HnswPayloadCheckTest, LengthBeyondTheBytesIsDataLoss) {
  Payload p = SmallHnsw();
  // 2^39 doubles: FAISS would allocate 4 TiB before reading one.
  SetU64(&p.bytes, p.faiss + kFirstVectorLength, uint64_t{1} << 39);
  auto loaded = DeserializeIndex(p.bytes);
  ASSERT_FALSE(loaded.ok());
  EXPECT_EQ(loaded.status().code(), absl::StatusCode::kDataLoss);
  EXPECT_NE(loaded.status().message().find("exceeds the bytes left"), std::string::npos)
      << loaded.status();
}

TEST(HnswPayloadCheckTest, NeighbourOutOfRangeIsDataLoss) {
  Payload p = SmallHnsw();
  // Walk to the neighbour list: assign_probas (f64), cum (i32), levels (i32),
  // offsets (u64), then neighbours (i32).
  size_t at = p.faiss + kFirstVectorLength;
  for (size_t element : {8, 4, 4, 8}) at += 8 + U64At(p.bytes, at) * element;
  ASSERT_GT(U64At(p.bytes, at), 0u);
  const int32_t out_of_range = 20;  // == ntotal
  std::memcpy(p.bytes.data() + at + 8, &out_of_range, 4);
  auto loaded = DeserializeIndex(p.bytes);
  ASSERT_FALSE(loaded.ok());
  EXPECT_EQ(loaded.status().code(), absl::StatusCode::kDataLoss);
  EXPECT_NE(loaded.status().message().find("neighbour id out of range"), std::string::npos)
      << loaded.status();
}

TEST(HnswPayloadCheckTest, BoolOtherThanZeroOrOneIsDataLoss) {
  Payload p = SmallHnsw();
  // is_trained, read by FAISS into a bool: 8 was undefined behaviour.
  p.bytes[p.faiss + 4 + 4 + 8 + 8 + 8] = 8;
  auto loaded = DeserializeIndex(p.bytes);
  ASSERT_FALSE(loaded.ok());
  EXPECT_EQ(loaded.status().code(), absl::StatusCode::kDataLoss);
}

TEST(HnswPayloadCheckTest, MetricOtherThanOursIsDataLoss) {
  // metric_type, read by FAISS into an enum: 0xf9000001 was undefined
  // behaviour; METRIC_L1 (2) is a valid FAISS metric but not one we write.
  for (int32_t metric : {static_cast<int32_t>(0xf9000001), 2, -1}) {
    Payload p = SmallHnsw();
    std::memcpy(p.bytes.data() + p.faiss + 4 + 4 + 8 + 8 + 8 + 1, &metric, 4);
    auto loaded = DeserializeIndex(p.bytes);
    ASSERT_FALSE(loaded.ok()) << metric;
    EXPECT_EQ(loaded.status().code(), absl::StatusCode::kDataLoss);
  }
}

TEST(HnswPayloadCheckTest, EveryTruncatedBlobIsDataLoss) {
  Payload p = SmallHnsw();
  // Cut the FAISS blob short (its length prefix says so too), keeping what
  // follows it (ids, tombstones) intact: never a crash, always DATA_LOSS.
  const uint64_t blob_len = U64At(p.bytes, p.faiss - 8);
  const std::string blob = p.bytes.substr(p.faiss, blob_len);
  const std::string tail = p.bytes.substr(p.faiss + blob_len);
  for (uint64_t keep = 0; keep < blob_len; keep += 5) {
    std::string cut = p.bytes.substr(0, p.faiss - 8);
    cut.append(reinterpret_cast<const char*>(&keep), 8);
    cut.append(blob.substr(0, keep));
    cut.append(tail);
    auto loaded = DeserializeIndex(cut);
    ASSERT_FALSE(loaded.ok()) << keep;
    EXPECT_EQ(loaded.status().code(), absl::StatusCode::kDataLoss) << loaded.status();
  }
}

// A trained IVF-PQ index (256 vectors train it) and where its FAISS array
// inverted lists ("ilar") start.
Payload TrainedIvfPq(size_t* ilar) {
  auto index = MakeIndex("IVF1,PQ1", 2, Metric::kL2);
  EXPECT_TRUE(index.ok());
  std::vector<int64_t> ids;
  std::vector<float> v;
  for (int i = 0; i < 300; ++i) {
    ids.push_back(i);
    v.push_back(static_cast<float>(i % 17));
    v.push_back(static_cast<float>(i % 5));
  }
  EXPECT_TRUE((*index)->Add(ids, v).ok());
  auto bytes = (*index)->Serialize();
  EXPECT_TRUE(bytes.ok());
  Payload p{*bytes, 0};
  *ilar = p.bytes.find("ilar");
  EXPECT_NE(*ilar, std::string::npos);
  return p;
}

// "ilar", nlist, code size, "full", the count of sizes, then sizes[0].
constexpr size_t kFirstListSize = 4 + 8 + 8 + 4 + 8;

TEST(IvfPqPayloadCheckTest, ValidPayloadLoads) {
  size_t ilar;
  Payload p = TrainedIvfPq(&ilar);
  ASSERT_EQ(p.bytes.substr(ilar + 20, 4), "full");
  auto loaded = DeserializeIndex(p.bytes);
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  EXPECT_EQ((*loaded)->size(), 300u);
}

TEST(IvfPqPayloadCheckTest, ListSizeBeyondTheBytesIsDataLoss) {
  size_t ilar;
  Payload p = TrainedIvfPq(&ilar);
  SetU64(&p.bytes, ilar + kFirstListSize, uint64_t{1} << 40);
  auto loaded = DeserializeIndex(p.bytes);
  ASSERT_FALSE(loaded.ok());
  EXPECT_EQ(loaded.status().code(), absl::StatusCode::kDataLoss);
  EXPECT_NE(loaded.status().message().find("exceeds the bytes left"), std::string::npos)
      << loaded.status();
}

TEST(IvfPqPayloadCheckTest, ListedIdThatIsNotLiveIsDataLoss) {
  size_t ilar;
  Payload p = TrainedIvfPq(&ilar);
  const uint64_t n = U64At(p.bytes, ilar + kFirstListSize);
  ASSERT_EQ(n, 300u);
  // After the one size: n one-byte codes, then n ids.
  SetU64(&p.bytes, ilar + kFirstListSize + 8 + n, 987654321);
  auto loaded = DeserializeIndex(p.bytes);
  ASSERT_FALSE(loaded.ok());
  EXPECT_EQ(loaded.status().code(), absl::StatusCode::kDataLoss);
  EXPECT_NE(loaded.status().message().find("not live"), std::string::npos) << loaded.status();
}

}  // namespace
}  // namespace neodb::index
