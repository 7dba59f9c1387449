// Snapshots written by an older FAISS load in the FAISS this build links.
// tests/fuzz/corpus/index_snapshot/ holds payloads and snapshot files that
// tests/fuzz/write_seeds.cc wrote with Debian's FAISS 1.7.3 (2026-11-25): a
// build against tools/build_faiss.sh's FAISS 1.12 must read them as they are
// (issue 51). Each seed: ids 10.. with vector i = 0.25 * ((3i + d) % 17) + 0.1,
// then id 11 removed; its first byte is the fuzz target's mode byte.
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "index/index_factory.h"
#include "index/snapshot.h"
#include "tests/index/test_util.h"

namespace neodb::index {
namespace {

namespace fs = std::filesystem;

const bool kSingleThreaded = testing::UseSingleThreadedBuilds();

struct Seed {
  const char* name;
  const char* spec_prefix;
  int count;  // before id 11 was removed
  int dim;
  bool exact_vectors;  // Reconstruct gives the vector back bit for bit
  bool reconstructs;   // Reconstruct answers at all (trained IVF-PQ keeps codes only)
  bool self_nearest;   // a search for id 10's vector ranks id 10 first
};

constexpr Seed kSeeds[] = {
    {"flat", "Flat", 6, 4, false, true, true},  // cosine: stored normalised
    {"hnsw", "HNSW8", 6, 4, true, true, true},  // L2
    // Inner product, below training (buffered): the longest vector ranks first.
    {"ivfpq", "IVF1,PQ2", 6, 4, true, true, false},
    // L2, trained; the seed's vectors repeat every 17 ids.
    {"ivfpq_trained", "IVF1,PQ1", 260, 2, false, false, false}};

std::string SeedBytes(const std::string& file) {
  const char* src = std::getenv("NEODB_SOURCE_DIR");
  const fs::path path = fs::path(src ? src : ".") / "tests/fuzz/corpus/index_snapshot" / file;
  std::ifstream in(path, std::ios::binary);
  EXPECT_TRUE(in) << path;
  std::stringstream ss;
  ss << in.rdbuf();
  std::string bytes = ss.str();
  return bytes.empty() ? bytes : bytes.substr(1);  // drop the mode byte
}

std::vector<float> SeedVector(int i, int dim) {
  std::vector<float> v;
  for (int d = 0; d < dim; ++d) v.push_back(0.25f * ((i * 3 + d) % 17) + 0.1f);
  return v;
}

void ExpectSeedIndex(const Seed& seed, const VectorIndex& index) {
  EXPECT_EQ(index.spec().rfind(seed.spec_prefix, 0), 0u) << index.spec();
  EXPECT_EQ(index.dimension(), seed.dim);
  EXPECT_EQ(index.size(), static_cast<size_t>(seed.count - 1));
  EXPECT_TRUE(index.Contains(10));
  EXPECT_FALSE(index.Contains(11));
  EXPECT_TRUE(index.Contains(9 + seed.count));
  const std::vector<float> v10 = SeedVector(0, seed.dim);
  std::vector<float> back(seed.dim);
  if (seed.reconstructs) {
    ASSERT_TRUE(index.Reconstruct(10, back).ok());
    if (seed.exact_vectors) {
      EXPECT_EQ(back, v10);
    }
  }
  auto hits = index.Search(v10, 3);
  ASSERT_TRUE(hits.ok()) << hits.status();
  ASSERT_EQ(hits->size(), 1u);
  ASSERT_EQ((*hits)[0].size(), 3u);
  for (const SearchHit& h : (*hits)[0]) {
    EXPECT_TRUE(index.Contains(h.id)) << h.id;
  }
  if (seed.self_nearest) {
    EXPECT_EQ((*hits)[0][0].id, 10);
  }
  // Written again by this FAISS, it loads back the same.
  auto bytes = index.Serialize();
  ASSERT_TRUE(bytes.ok());
  auto again = DeserializeIndex(*bytes);
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_EQ((*again)->Ids(), index.Ids());
  EXPECT_EQ((*again)->spec(), index.spec());
}

TEST(FaissFormatTest, PayloadsWrittenByFaiss173Load) {
  for (const Seed& seed : kSeeds) {
    SCOPED_TRACE(seed.name);
    auto index = DeserializeIndex(SeedBytes(std::string(seed.name) + "_payload"));
    ASSERT_TRUE(index.ok()) << index.status();
    ExpectSeedIndex(seed, **index);
  }
}

TEST(FaissFormatTest, SnapshotFilesWrittenByFaiss173Load) {
  for (const Seed& seed : kSeeds) {
    SCOPED_TRACE(seed.name);
    const fs::path dir = fs::path(::testing::TempDir()) / "faiss_format_test" / seed.name;
    fs::remove_all(dir);
    fs::create_directories(dir);
    {
      std::ofstream out(dir / "snapshot-00000000000000000007-0000000000000001.nsnap",
                        std::ios::binary);
      const std::string bytes = SeedBytes(std::string(seed.name) + "_file");
      out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    }
    auto loaded = ReadLatestSnapshot(dir.string());
    ASSERT_TRUE(loaded.ok()) << loaded.status();
    EXPECT_EQ(loaded->manifest.count, static_cast<uint64_t>(seed.count - 1));
    EXPECT_EQ(loaded->manifest.covered_seq, 7u);
    ExpectSeedIndex(seed, *loaded->index);
  }
}

}  // namespace
}  // namespace neodb::index
