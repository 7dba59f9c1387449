// Ties are broken by document id, not by insertion order: two collections
// holding the same documents, written in different orders (so with different
// internal ids), answer every query alike, in every mode, at every k, also
// when hundreds of documents tie across a leg's cut-off at rank 100
// (index/keyword/fusion.h: FetchLeg, CutLeg; engine/database_search.cc).
#include <algorithm>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "engine/database.h"
#include "engine/fake_embedder.h"
#include "gtest/gtest.h"
#include "tests/engine/engine_test_util.h"

namespace neodb::engine {
namespace {

constexpr int kDim = 16;
const absl::Time kFar = absl::InfiniteFuture();

class SearchTiesTest : public EngineTest {
 protected:
  // The documents: 250 with the query's own text (they tie exactly in BM25
  // and, identical texts being identical vectors, in the vector leg: ranks 1
  // to 250 of both, across the cut at 100), 150 more that tie among
  // themselves lower down, and 60 of their own. Every third is in group 1.
  static std::vector<DocumentInput> Documents() {
    std::vector<DocumentInput> docs;
    auto add = [&](std::string id, std::string text) {
      DocumentInput d;
      d.id = std::move(id);
      d.text = std::move(text);
      d.metadata["g"] = db::Value(static_cast<int64_t>(docs.size() % 3 == 0 ? 1 : 0));
      docs.push_back(std::move(d));
    };
    for (int i = 0; i < 250; ++i) add(absl::StrCat("t", i), "apple river");
    for (int i = 0; i < 150; ++i) add(absl::StrCat("w", i), "apple stone");
    const char* const words[] = {"apple", "river", "stone", "cloud", "forest", "engine"};
    std::mt19937 rng(5);
    for (int i = 0; i < 60; ++i) {
      std::string text;
      for (int j = 0; j < 5; ++j) absl::StrAppend(&text, j ? " " : "", words[rng() % 6]);
      add(absl::StrCat("u", i), text);
    }
    return docs;
  }

  // Writes `docs` into a new collection `name` one at a time, in that order.
  void Fill(const std::string& name, const std::vector<DocumentInput>& docs) {
    db::CollectionSpec spec;
    spec.name = name;
    ASSERT_TRUE(db_->CreateCollection(spec).ok());
    for (const DocumentInput& d : docs) {
      auto r = db_->Upsert(name, {d}, kFar);
      ASSERT_TRUE(r.ok()) << r.status();
    }
  }

  absl::StatusOr<SearchResult> Query(const std::string& name, SearchMode mode, int k,
                                     std::optional<keyword::FusionOptions> fusion,
                                     bool filtered) {
    SearchParams p;
    p.k = k;
    p.mode = mode;
    p.fusion = fusion;
    p.explain = true;
    if (filtered) p.filter = db::Filter::Eq("g", db::Value(int64_t{1}));
    return db_->NearText(name, "apple river", std::nullopt, p, kFar);
  }
};

std::string Describe(const SearchResult& r) {
  std::string s;
  for (const Hit& h : r.hits) {
    absl::StrAppend(&s, h.id, " ", h.score, " k", h.explain->keyword_rank, " v",
                    h.explain->vector_rank, "\n");
  }
  return s;
}

TEST_F(SearchTiesTest, SameDocumentsInAnotherOrderRankAlike) {
  OpenWith(BaseOptions(), std::make_unique<FakeEmbedder>(kDim, 64, 1));
  const std::vector<DocumentInput> docs = Documents();
  Fill("inserted_in_order", docs);
  // The other copy: shuffled, and 100 of its documents first written with
  // another text and then overwritten (their internal ids move again).
  std::vector<DocumentInput> shuffled = docs;
  std::shuffle(shuffled.begin(), shuffled.end(), std::mt19937(11));
  std::vector<DocumentInput> first = shuffled;
  first.resize(100);
  for (DocumentInput& d : first) d.text = "cloud forest";
  first.insert(first.end(), shuffled.begin(), shuffled.end());
  Fill("shuffled", first);

  keyword::FusionOptions weighted, rrf;
  weighted.method = keyword::FusionMethod::kWeighted;
  weighted.alpha = 0.5;
  rrf.method = keyword::FusionMethod::kReciprocalRank;
  struct Case {
    SearchMode mode;
    std::optional<keyword::FusionOptions> fusion;
  };
  const Case cases[] = {{SearchMode::kKeyword, std::nullopt},
                        {SearchMode::kVector, std::nullopt},
                        {SearchMode::kHybrid, std::nullopt},
                        {SearchMode::kHybrid, weighted},
                        {SearchMode::kHybrid, rrf}};
  int compared = 0;
  for (const Case& c : cases) {
    for (int k : {10, 100, 150, 1000}) {
      for (bool filtered : {false, true}) {
        SCOPED_TRACE(absl::StrCat(
            std::string(SearchModeName(c.mode)), " ",
            c.fusion ? std::string(keyword::FusionMethodName(c.fusion->method)) : "", " k=", k,
            filtered ? " filtered" : ""));
        auto a = Query("inserted_in_order", c.mode, k, c.fusion, filtered);
        auto b = Query("shuffled", c.mode, k, c.fusion, filtered);
        ASSERT_TRUE(a.ok()) << a.status();
        ASSERT_TRUE(b.ok()) << b.status();
        ASSERT_FALSE(a->hits.empty());
        EXPECT_EQ(Describe(*a), Describe(*b));
        EXPECT_EQ(a->alpha, b->alpha);
        // Within equal scores, ascending document id. (The fused score, a
        // double, is compared: two that differ may round to one float score.)
        for (size_t i = 1; i < a->hits.size(); ++i) {
          if (a->hits[i].explain->fused_score == a->hits[i - 1].explain->fused_score) {
            EXPECT_LT(a->hits[i - 1].id, a->hits[i].id) << Describe(*a);
          }
        }
        ++compared;
      }
    }
  }
  EXPECT_EQ(compared, 40);

  // The cut itself: of the 250 tied documents, those in a top 100 are the
  // first ids of the group, wherever the cut fell in it (a few documents of
  // their own rank above them in the keyword leg).
  std::vector<std::string> tied;
  for (int i = 0; i < 250; ++i) tied.push_back(absl::StrCat("t", i));
  std::sort(tied.begin(), tied.end());
  for (SearchMode mode : {SearchMode::kKeyword, SearchMode::kVector, SearchMode::kHybrid}) {
    SCOPED_TRACE(std::string(SearchModeName(mode)));
    auto r = Query("shuffled", mode, 100, std::nullopt, false);
    ASSERT_TRUE(r.ok()) << r.status();
    ASSERT_EQ(r->hits.size(), 100u);
    std::vector<std::string> ids;
    for (const Hit& h : r->hits) {
      if (h.id[0] == 't') ids.push_back(h.id);
    }
    ASSERT_GT(ids.size(), 50u);
    ASSERT_LT(ids.size(), 250u);
    EXPECT_EQ(ids, std::vector<std::string>(tied.begin(), tied.begin() + ids.size()));
  }
}

}  // namespace
}  // namespace neodb::engine
