// The server memory budget (DatabaseOptions::max_memory_bytes,
// engine/memory_budget.h): over it, writes and encoder work are
// RESOURCE_EXHAUSTED and everything that does not grow memory goes on. A
// budget of one byte is always exceeded and one of 2^50 bytes never, so the
// tests do not depend on what this process happens to hold.
#include "engine/memory_budget.h"

#ifdef __GLIBC__
#include <malloc.h>
#endif

#include <cstdlib>
#include <cstring>

#include "engine/database.h"
#include "engine/fake_embedder.h"
#include "gtest/gtest.h"
#include "tests/engine/engine_test_util.h"

namespace neodb::engine {
namespace {

const absl::Time kFar = absl::InfiniteFuture();
constexpr uint64_t kNever = uint64_t{1} << 50;

TEST(MemoryBudgetTest, NoBudgetAndAHugeOneAdmit) {
  EXPECT_TRUE(MemoryBudget(0).Admit("upsert").ok());
  MemoryBudget huge(kNever);
  EXPECT_TRUE(huge.Admit("upsert").ok());
  EXPECT_EQ(huge.refused(), 0u);
}

TEST(MemoryBudgetTest, OverTheBudgetIsResourceExhaustedNamingTheFlag) {
  ASSERT_GT(ResidentBytes(), 0u);
  MemoryBudget tiny(1);
  for (int i = 0; i < 2; ++i) {  // the second call finds the release done already
    absl::Status s = tiny.Admit("upsert");
    EXPECT_EQ(s.code(), absl::StatusCode::kResourceExhausted);
    EXPECT_NE(s.message().find("upsert refused"), std::string::npos) << s;
    EXPECT_NE(s.message().find("--max-memory-mib"), std::string::npos) << s;
  }
  EXPECT_EQ(tiny.refused(), 2u);
}

#ifdef __GLIBC__
// Kept where the compiler cannot see it unused, so malloc/free stay real.
void* volatile g_sink = nullptr;

void* Touched(size_t bytes) {
  void* p = std::malloc(bytes);
  std::memset(p, 1, bytes);
  g_sink = p;
  return p;
}

// glibc raises its mmap threshold to the size of each mmapped block freed;
// pinned, a 512 KiB block made after a 4 MiB one was freed is still its own
// mapping (counted in hblkhd) and leaves the heaps when freed.
TEST(PinMallocMmapThresholdTest, ABlockFreedDoesNotMoveTheThreshold) {
  ASSERT_EQ(std::getenv("MALLOC_MMAP_THRESHOLD_"), nullptr);
  ASSERT_TRUE(PinMallocMmapThreshold());
  std::free(Touched(4 << 20));
  const size_t before = mallinfo2().hblkhd;
  void* mid = Touched(512 << 10);
  EXPECT_GE(mallinfo2().hblkhd, before + (512 << 10));
  std::free(mid);
  EXPECT_EQ(mallinfo2().hblkhd, before);
  // Small blocks still come from the heaps.
  void* small = Touched(64 << 10);
  EXPECT_EQ(mallinfo2().hblkhd, before);
  std::free(small);
}
#endif

class DatabaseMemoryBudgetTest : public EngineTest {
 protected:
  void Open(uint64_t max_memory_bytes) {
    DatabaseOptions o = BaseOptions();
    o.max_memory_bytes = max_memory_bytes;
    OpenWith(o, std::make_unique<FakeEmbedder>(8, 64, 1));
  }
  absl::StatusOr<SearchResult> Query(SearchMode mode) {
    SearchParams p;
    p.k = 2;
    p.mode = mode;
    return db_->NearText("c", "apple", std::nullopt, p, kFar);
  }
};

TEST_F(DatabaseMemoryBudgetTest, WritesAndEncoderWorkWaitReadsAndDeletesGoOn) {
  Open(kNever);
  db::CollectionSpec spec;
  spec.name = "c";
  spec.index_spec = "Flat";
  ASSERT_TRUE(db_->CreateCollection(spec).ok());
  ASSERT_TRUE(db_->Upsert("c", {{"a", "apple river", {}}, {"b", "apple stone", {}}}, kFar).ok());

  Open(1);
  EXPECT_EQ(db_->Upsert("c", {{"c", "cloud", {}}}, kFar).status().code(),
            absl::StatusCode::kResourceExhausted);
  EXPECT_EQ(Query(SearchMode::kVector).status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_EQ(Query(SearchMode::kHybrid).status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_EQ(db_->Embed({"apple"}, encoder::EmbedOptions(), kFar).status().code(),
            absl::StatusCode::kResourceExhausted);
  auto keyword = Query(SearchMode::kKeyword);
  ASSERT_TRUE(keyword.ok()) << keyword.status();
  EXPECT_EQ(keyword->hits.size(), 2u);
  auto got = db_->Get("c", {"a"});
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_TRUE((*got)[0].has_value());
  auto deleted = db_->Delete("c", {"a"});
  ASSERT_TRUE(deleted.ok()) << deleted.status();
  EXPECT_EQ(*deleted, 1u);
}

}  // namespace
}  // namespace neodb::engine
