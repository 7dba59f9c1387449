// Threshold, offset and batches for text queries (keyword, hybrid and
// vector modes), through engine::Database with the fake embedder. BM25 and
// the fusions cannot be brute-forced here (query_features_test.cc does the
// exact checks on vectors), so each answer is checked against the plain
// answer of the same query: an offset page is a slice of it, a threshold
// cuts a prefix of it, a batch answers as its single queries do, and a
// batch's texts go to the encoder as one batch. Seeds fixed and printed.
#include <iostream>
#include <random>

#include "absl/strings/str_cat.h"
#include "engine/database.h"
#include "engine/fake_embedder.h"
#include "gtest/gtest.h"
#include "tests/engine/engine_test_util.h"

namespace neodb::engine {
namespace {

constexpr uint64_t kSeeds[] = {1, 7, 20240501};
constexpr int kDocs = 80;
const absl::Time kFar = absl::InfiniteFuture();
const char* const kWords[] = {"apple", "river", "stone", "cloud", "tiger", "maple",
                              "ocean", "ember", "frost", "delta", "lumen", "quartz"};

std::string Text(std::mt19937_64& rng, int words) {
  std::string s;
  for (int i = 0; i < words; ++i) absl::StrAppend(&s, i ? " " : "", kWords[rng() % 12]);
  return s;
}

class TextQueryFeaturesTest : public EngineTest {
 protected:
  void Fill(uint64_t seed) {
    TearDown();
    SetUp();
    auto e = std::make_unique<FakeEmbedder>(16, 64, 1);
    embedder_ = e.get();
    OpenWith(BaseOptions(), std::move(e));
    db::CollectionSpec spec;
    spec.name = "c";
    ASSERT_TRUE(db_->CreateCollection(spec).ok());
    std::mt19937_64 rng(seed);
    std::vector<DocumentInput> docs;
    for (int i = 0; i < kDocs; ++i) {
      DocumentInput d;
      d.id = absl::StrCat("d", 100 + i);
      d.text = Text(rng, 3 + static_cast<int>(rng() % 6));
      d.metadata["g"] = static_cast<int64_t>(rng() % 4);
      docs.push_back(std::move(d));
    }
    ASSERT_TRUE(db_->Upsert("c", std::move(docs), kFar).ok());
  }
  absl::StatusOr<SearchResult> Near(const std::string& q, const SearchParams& p) {
    return db_->NearText("c", q, std::nullopt, p, kFar);
  }

  FakeEmbedder* embedder_ = nullptr;
};

void ExpectSlice(const std::vector<Hit>& got, const std::vector<Hit>& all, size_t from,
                 size_t n) {
  const size_t end = std::min(all.size(), from + n);
  ASSERT_EQ(got.size(), end > from ? end - from : 0);
  for (size_t i = 0; i < got.size(); ++i) {
    EXPECT_EQ(got[i].id, all[from + i].id) << i;
    EXPECT_EQ(got[i].score, all[from + i].score) << i;
  }
}

TEST_F(TextQueryFeaturesTest, OffsetAndThresholdAreSlicesOfThePlainAnswer) {
  constexpr int kQueries = 150;
  size_t cases = 0;
  for (const uint64_t seed : kSeeds) {
    std::cout << "[ seed     ] " << seed << ": " << kDocs << " documents, " << kQueries
              << " text queries\n";
    SCOPED_TRACE(absl::StrCat("seed ", seed));
    ASSERT_NO_FATAL_FAILURE(Fill(seed));
    std::mt19937_64 rng(seed + 1);
    for (int i = 0; i < kQueries; ++i) {
      SCOPED_TRACE(absl::StrCat("query ", i));
      const std::string q = Text(rng, 1 + static_cast<int>(rng() % 3));
      SearchParams p;
      p.mode = std::vector<SearchMode>{SearchMode::kKeyword, SearchMode::kHybrid,
                                       SearchMode::kVector}[rng() % 3];
      // offset + k within the hybrid legs' depth (100), where the fused
      // scores do not depend on it.
      p.k = 1 + static_cast<int>(rng() % 20);
      p.offset = static_cast<int>(rng() % 60);
      SearchParams whole = p;
      whole.k = p.k + p.offset;
      whole.offset = 0;
      auto all = Near(q, whole);
      ASSERT_TRUE(all.ok()) << all.status();
      auto page = Near(q, p);
      ASSERT_TRUE(page.ok()) << page.status();
      ASSERT_NO_FATAL_FAILURE(ExpectSlice(page->hits, all->hits, p.offset, p.k));
      if (!all->hits.empty()) {
        whole.score_threshold = all->hits[rng() % all->hits.size()].score;
        auto cut = Near(q, whole);
        ASSERT_TRUE(cut.ok()) << cut.status();
        size_t above = 0;
        while (above < all->hits.size() && all->hits[above].score >= *whole.score_threshold) {
          ++above;
        }
        ASSERT_NO_FATAL_FAILURE(ExpectSlice(cut->hits, all->hits, 0, above));
      }
      ++cases;
    }
  }
  std::cout << "[ checked  ] " << cases << " text queries (page and threshold each)\n";
}

TEST_F(TextQueryFeaturesTest, BatchIsOneEmbeddingBatchAndAnswersAsSingleQueries) {
  for (const uint64_t seed : kSeeds) {
    std::cout << "[ seed     ] " << seed << ": a batch of 40 text queries\n";
    SCOPED_TRACE(absl::StrCat("seed ", seed));
    ASSERT_NO_FATAL_FAILURE(Fill(seed));
    std::mt19937_64 rng(seed + 2);
    std::vector<Database::TextQuery> queries;
    size_t embedded = 0;
    for (int i = 0; i < 40; ++i) {
      Database::TextQuery q;
      q.query = Text(rng, 1 + static_cast<int>(rng() % 3));
      q.params.mode = std::vector<SearchMode>{SearchMode::kKeyword, SearchMode::kHybrid,
                                              SearchMode::kVector}[i % 3];
      q.params.k = 1 + static_cast<int>(rng() % 10);
      if (i % 7 == 0) q.params.group_by = GroupBy{"g", 2, 2};
      if (i == 5) q.query = "";       // malformed
      if (i == 11) q.params.k = 0;    // out of range
      if (q.params.mode != SearchMode::kKeyword && i != 5 && i != 11) ++embedded;
      queries.push_back(std::move(q));
    }
    const int64_t calls = embedder_->calls();
    auto batch = db_->BatchNearText("c", queries, kFar);
    ASSERT_TRUE(batch.ok()) << batch.status();
    EXPECT_EQ(embedder_->calls() - calls, 1) << "the batch's " << embedded << " texts";
    ASSERT_EQ(batch->size(), queries.size());
    for (size_t i = 0; i < queries.size(); ++i) {
      SCOPED_TRACE(absl::StrCat("query ", i));
      auto single = Near(queries[i].query, queries[i].params);
      ASSERT_EQ((*batch)[i].status(), single.status());
      if (!single.ok()) {
        EXPECT_TRUE(absl::IsInvalidArgument(single.status()));
        continue;
      }
      ASSERT_NO_FATAL_FAILURE(ExpectSlice((*batch)[i]->hits, single->hits, 0, 1000));
      ASSERT_EQ((*batch)[i]->groups.size(), single->groups.size());
      for (size_t g = 0; g < single->groups.size(); ++g) {
        EXPECT_TRUE((*batch)[i]->groups[g].value == single->groups[g].value);
        ASSERT_NO_FATAL_FAILURE(
            ExpectSlice((*batch)[i]->groups[g].hits, single->groups[g].hits, 0, 1000));
      }
    }
  }
  std::vector<Database::TextQuery> too_many(Database::kMaxBatchQueries + 1);
  for (auto& q : too_many) q.query = "apple";
  auto r = db_->BatchNearText("c", too_many, kFar);
  EXPECT_TRUE(absl::IsInvalidArgument(r.status())) << r.status();
  EXPECT_TRUE(absl::IsInvalidArgument(db_->BatchNearText("c", {}, kFar).status()));
  EXPECT_TRUE(absl::IsNotFound(db_->BatchNearText("nope", too_many, kFar).status()));
}

}  // namespace
}  // namespace neodb::engine
