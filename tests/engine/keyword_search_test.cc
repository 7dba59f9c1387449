// The keyword index inside the engine: kept equal to the store through the one
// Apply path (random writes, restarts from its snapshot, replay after a
// stand-in crash, a corrupt snapshot), the three query modes with filters,
// explain, keyword mode without the encoder, and validation.
#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <random>
#include <set>

#include "absl/strings/str_cat.h"
#include "engine/database.h"
#include "engine/fake_embedder.h"
#include "gtest/gtest.h"
#include "index/keyword/analyzer.h"
#include "tests/engine/engine_test_util.h"

namespace neodb::engine {
namespace {

namespace fs = std::filesystem;

constexpr int kDim = 16;
const absl::Time kFar = absl::InfiniteFuture();
const char* const kWords[] = {"apple",  "river",  "stone",  "cloud",  "forest", "engine",
                              "violet", "copper", "harbor", "meadow", "signal", "lantern"};

class KeywordSearchTest : public EngineTest {
 protected:
  void Open(bool snapshot_on_close = true) {
    DatabaseOptions o = BaseOptions();
    o.snapshot_on_close = snapshot_on_close;
    OpenWith(o, std::make_unique<FakeEmbedder>(kDim, 64, 1));
  }
  absl::Status Create(const std::string& name, db::CollectionSpec spec = {}) {
    spec.name = name;
    return db_->CreateCollection(spec).status();
  }
  void Put(const std::string& id, const std::string& text, db::Metadata m = {}) {
    auto r = db_->Upsert("c", {{id, text, std::move(m)}}, kFar);
    ASSERT_TRUE(r.ok()) << r.status();
    model_[id] = text;
  }
  void Del(const std::string& id) {
    ASSERT_TRUE(db_->Delete("c", {id}).ok());
    model_.erase(id);
  }
  absl::StatusOr<SearchResult> Query(const std::string& q, SearchMode mode, int k,
                                     std::optional<db::Filter> filter = std::nullopt) {
    SearchParams p;
    p.k = k;
    p.mode = mode;
    p.filter = std::move(filter);
    p.explain = true;
    return db_->NearText("c", q, std::nullopt, p, kFar);
  }

  // Every vocabulary word as a keyword query returns exactly the live
  // documents holding it, scored as BM25 recounted from the documents the
  // test wrote (N, df, lengths, tf).
  void ExpectEqualsRecount() {
    keyword::Analyzer analyzer(keyword::AnalyzerKind::kEnglish);
    std::map<std::string, std::map<std::string, int>> tf;  // term -> doc -> tf
    std::map<std::string, double> len;
    double total = 0;
    for (const auto& [id, text] : model_) {
      auto tokens = analyzer.Analyze(text);
      len[id] = static_cast<double>(keyword::CountedLength(tokens));
      total += len[id];
      for (const auto& t : tokens) ++tf[t.term][id];
    }
    const double n = static_cast<double>(model_.size());
    const double avg = n > 0 ? total / n : 0;
    const double k1 = 0.9, b = 0.4;
    for (const char* w : kWords) {
      const std::string term = analyzer.Analyze(w).at(0).term;
      auto r = Query(w, SearchMode::kKeyword, 1000);
      ASSERT_TRUE(r.ok()) << r.status();
      std::map<std::string, float> got;
      for (const auto& h : r->hits) got[h.id] = h.score;
      const auto& want = tf[term];
      ASSERT_EQ(got.size(), want.size()) << w;
      const double df = static_cast<double>(want.size());
      const double idf = std::log(1 + (n - df + 0.5) / (df + 0.5));
      for (const auto& [id, f] : want) {
        ASSERT_TRUE(got.count(id)) << w << " " << id;
        const double norm = avg > 0 ? len[id] / avg : 0;
        const double s = idf * f * (k1 + 1) / (f + k1 * (1 - b + b * norm));
        // float accumulation in the index: a few ulps of float.
        EXPECT_NEAR(got[id], s, 1e-5 * std::max(1.0, s)) << w << " " << id;
      }
    }
    auto v = db_->Verify("c");
    ASSERT_TRUE(v.ok()) << v.status();
    EXPECT_EQ(v->keyword_indexed, model_.size());
    EXPECT_EQ(v->keyword_missing, 0u);
    EXPECT_EQ(v->keyword_stale, 0u);
    EXPECT_TRUE(v->keyword_content_matches);
    EXPECT_EQ(v->missing_from_index, 0u);
    EXPECT_EQ(v->stale_in_index, 0u);
  }

  void RandomWrites(std::mt19937& rng, int n) {
    for (int i = 0; i < n; ++i) {
      const std::string id = absl::StrCat("d", rng() % 60);
      if (rng() % 4 == 0 && model_.count(id)) {
        Del(id);
        continue;
      }
      std::string text;
      const int words = 1 + static_cast<int>(rng() % 9);
      for (int j = 0; j < words; ++j) absl::StrAppend(&text, kWords[rng() % 12], " ");
      Put(id, text);
    }
  }

  std::map<std::string, std::string> model_;  // what the store should hold
};

TEST_F(KeywordSearchTest, PostingsEqualRecountThroughWritesRestartsAndCrash) {
  std::mt19937 rng(7);
  Open();
  ASSERT_TRUE(Create("c").ok());
  RandomWrites(rng, 300);
  ExpectEqualsRecount();
  // Clean restart: the keyword index comes from its snapshot, no rebuild.
  Open();
  DatabaseStats s = db_->Stats();
  EXPECT_EQ(s.keyword_snapshot_loads, 1u);
  EXPECT_EQ(s.keyword_rebuilds, 0u);
  auto info = db_->DescribeCollection("c");
  ASSERT_TRUE(info.ok());
  EXPECT_EQ(info->keyword.documents, model_.size());
  EXPECT_GT(info->keyword.snapshot_bytes, 0u);
  EXPECT_GT(info->keyword.postings, 0u);
  ExpectEqualsRecount();
  // More writes, then a stop without snapshots (what kill -9 leaves): the
  // snapshot plus the change-log replay equal the store.
  RandomWrites(rng, 300);
  Open(/*snapshot_on_close=*/false);
  RandomWrites(rng, 100);
  db_.reset();
  Open();
  s = db_->Stats();
  EXPECT_EQ(s.keyword_snapshot_loads, 1u);
  EXPECT_EQ(s.keyword_rebuilds, 0u);
  EXPECT_GT(s.replayed_changes, 0u);
  ExpectEqualsRecount();
}

TEST_F(KeywordSearchTest, CorruptOrMissingSnapshotRebuildsFromTheStore) {
  std::mt19937 rng(11);
  Open();
  ASSERT_TRUE(Create("c").ok());
  RandomWrites(rng, 200);
  db_.reset();  // snapshots on close
  const fs::path snap = dir_ / "snapshots" / "c" / "keyword.snap";
  ASSERT_TRUE(fs::exists(snap));
  {
    std::fstream f(snap, std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(static_cast<std::streamoff>(fs::file_size(snap) / 2));
    f.write("\xff\xff\xff\xff", 4);
  }
  Open();
  EXPECT_EQ(db_->Stats().keyword_rebuilds, 1u);
  EXPECT_EQ(db_->Stats().keyword_snapshot_loads, 0u);
  ExpectEqualsRecount();
  db_.reset();
  fs::remove(snap);
  Open();
  EXPECT_EQ(db_->Stats().keyword_rebuilds, 1u);
  ExpectEqualsRecount();
}

TEST_F(KeywordSearchTest, FiltersApplyInsideEveryModeAndReturnMinKMatches) {
  Open();
  ASSERT_TRUE(Create("c").ok());
  for (int i = 0; i < 90; ++i) {
    Put(absl::StrCat("d", i), absl::StrCat("common ", kWords[i % 12], " n", i),
        {{"group", int64_t{i % 9}}});
  }
  // group 0 holds 10 documents; the keyword leg alone would rank others first.
  auto filter = db::ParseFilterJson(R"({"field":"group","eq":0})");
  ASSERT_TRUE(filter.ok());
  for (SearchMode mode : {SearchMode::kKeyword, SearchMode::kVector, SearchMode::kHybrid}) {
    for (int k : {3, 10, 50}) {
      auto r = Query("common apple", mode, k, *filter);
      ASSERT_TRUE(r.ok()) << r.status();
      EXPECT_EQ(r->hits.size(), static_cast<size_t>(std::min(k, 10)))
          << SearchModeName(mode) << " k=" << k;
      std::set<std::string> ids;
      for (const auto& h : r->hits) {
        const int n = std::stoi(h.id.substr(1));
        EXPECT_EQ(n % 9, 0) << h.id;
        ids.insert(h.id);
      }
      EXPECT_EQ(ids.size(), r->hits.size());
    }
  }
}

TEST_F(KeywordSearchTest, ExplainCarriesEachLegsRankAndScore) {
  Open();
  ASSERT_TRUE(Create("c").ok());
  for (int i = 0; i < 40; ++i) Put(absl::StrCat("d", i), absl::StrCat(kWords[i % 12], " n", i));
  for (SearchMode mode : {SearchMode::kKeyword, SearchMode::kVector, SearchMode::kHybrid}) {
    auto r = Query("apple river", mode, 10);
    ASSERT_TRUE(r.ok()) << r.status();
    ASSERT_FALSE(r->hits.empty());
    EXPECT_EQ(r->mode, mode);
    for (size_t i = 0; i < r->hits.size(); ++i) {
      const Hit& h = r->hits[i];
      ASSERT_TRUE(h.explain.has_value());
      const HitExplain& e = *h.explain;
      EXPECT_FLOAT_EQ(h.score, static_cast<float>(e.fused_score));
      if (mode == SearchMode::kKeyword) {
        EXPECT_EQ(e.keyword_rank, static_cast<int>(i + 1));
        EXPECT_EQ(e.vector_rank, 0);
        EXPECT_FLOAT_EQ(e.keyword_score, h.score);
      } else if (mode == SearchMode::kVector) {
        EXPECT_EQ(e.vector_rank, static_cast<int>(i + 1));
        EXPECT_EQ(e.keyword_rank, 0);
        EXPECT_FLOAT_EQ(e.vector_score, h.score);
      } else {
        EXPECT_TRUE(e.keyword_rank > 0 || e.vector_rank > 0);
        EXPECT_GE(e.fused_score, 0.0);
        EXPECT_LE(e.fused_score, 1.0);
      }
    }
    if (mode == SearchMode::kHybrid) {
      EXPECT_GE(r->alpha, 0.0);
      EXPECT_LE(r->alpha, 0.5);
      // Fused scores are best first.
      for (size_t i = 1; i < r->hits.size(); ++i) {
        EXPECT_GE(r->hits[i - 1].explain->fused_score, r->hits[i].explain->fused_score);
      }
    }
  }
  // Without explain, hits carry none.
  SearchParams p;
  auto r = db_->NearText("c", "apple", std::nullopt, p, kFar);
  ASSERT_TRUE(r.ok());
  ASSERT_FALSE(r->hits.empty());
  EXPECT_FALSE(r->hits[0].explain.has_value());
}

TEST_F(KeywordSearchTest, KeywordModeNeverEmbedsHybridDoes) {
  Open();
  ASSERT_TRUE(Create("c").ok());
  Put("a", "copper lantern");
  Put("b", "violet meadow");
  const int64_t before = db_->Stats().embed.embedded_texts;
  auto r = Query("lantern", SearchMode::kKeyword, 5);
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_EQ(r->hits.size(), 1u);
  EXPECT_EQ(r->hits[0].id, "a");
  EXPECT_EQ(db_->Stats().embed.embedded_texts, before);
  ASSERT_TRUE(Query("lantern", SearchMode::kHybrid, 5).ok());
  EXPECT_EQ(db_->Stats().embed.embedded_texts, before + 1);
}

TEST_F(KeywordSearchTest, TitleFieldIsIndexedWithItsWeight) {
  Open();
  db::CollectionSpec spec;
  spec.title_field = "title";
  spec.title_weight = 3;
  ASSERT_TRUE(Create("c", spec).ok());
  Put("a", "body text only", {{"title", std::string("harbor")}});
  Put("b", "harbor in the body", {});
  auto r = Query("harbor", SearchMode::kKeyword, 5);
  ASSERT_TRUE(r.ok());
  ASSERT_EQ(r->hits.size(), 2u);
  EXPECT_EQ(r->hits[0].id, "a");  // tf 3 from the title
  auto info = db_->DescribeCollection("c");
  ASSERT_TRUE(info.ok());
  EXPECT_EQ(info->spec.title_field, "title");
  EXPECT_EQ(info->spec.title_weight, 3);
  EXPECT_EQ(info->spec.analyzer, "english");
}

TEST_F(KeywordSearchTest, BadSettingsAndParamsAreInvalidArgument) {
  Open();
  for (auto bad : std::vector<std::function<void(db::CollectionSpec&)>>{
           [](db::CollectionSpec& s) { s.analyzer = "klingon"; },
           [](db::CollectionSpec& s) { s.bm25_k1 = -1; },
           [](db::CollectionSpec& s) { s.bm25_k1 = std::nan(""); },
           [](db::CollectionSpec& s) { s.bm25_b = 1.5; },
           [](db::CollectionSpec& s) { s.title_weight = 0; },
           [](db::CollectionSpec& s) { s.fusion = "klingon"; },
           [](db::CollectionSpec& s) { s.fusion_alpha = 1.5; },
           [](db::CollectionSpec& s) { s.fusion_alpha = std::nan(""); }}) {
    db::CollectionSpec spec;
    bad(spec);
    EXPECT_EQ(Create("x", spec).code(), absl::StatusCode::kInvalidArgument);
  }
  ASSERT_TRUE(Create("c").ok());
  Put("a", "apple");
  SearchParams p;
  p.fusion.emplace();
  p.fusion->alpha = 1.5;
  EXPECT_EQ(db_->NearText("c", "apple", std::nullopt, p, kFar).status().code(),
            absl::StatusCode::kInvalidArgument);
  p = {};
  p.mode = static_cast<SearchMode>(9);
  EXPECT_EQ(db_->NearText("c", "apple", std::nullopt, p, kFar).status().code(),
            absl::StatusCode::kInvalidArgument);
  p = {};
  p.fusion.emplace();
  p.fusion->method = static_cast<keyword::FusionMethod>(9);
  EXPECT_EQ(db_->NearText("c", "apple", std::nullopt, p, kFar).status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_FALSE(ParseSearchMode("fuzzy").ok());
  EXPECT_EQ(*ParseSearchMode("keyword"), SearchMode::kKeyword);
}

// Hybrid queries that name no fusion use the collection's (its spec): set at
// creation, changed by SetDefaultFusion for the next query, persisted across
// a restart, and overridden by a query that names one. Weighted alpha 0 is
// the keyword ranking, alpha 1 the vector ranking, so the fused order shows
// which fusion ran.
TEST_F(KeywordSearchTest, TheCollectionsDefaultFusionAppliesUnlessAQueryNamesOne) {
  Open();
  db::CollectionSpec spec;
  spec.fusion = "weighted";
  spec.fusion_alpha = 0;
  ASSERT_TRUE(Create("c", spec).ok());
  std::mt19937 rng(7);
  for (int i = 0; i < 40; ++i) {
    std::string text;
    for (int w = 0; w < 6; ++w) absl::StrAppend(&text, kWords[rng() % 12], " ");
    Put(absl::StrCat("d", i), text);
  }
  auto ids = [](const SearchResult& r) {
    std::vector<std::string> out;
    for (const auto& h : r.hits) out.push_back(h.id);
    return out;
  };
  auto run = [&](SearchMode mode, std::optional<keyword::FusionOptions> fusion = std::nullopt) {
    SearchParams p;
    p.k = 10;
    p.mode = mode;
    p.fusion = fusion;
    auto r = db_->NearText("c", "copper river lantern", std::nullopt, p, kFar);
    EXPECT_TRUE(r.ok()) << r.status();
    return r.ok() ? *r : SearchResult{};
  };
  const auto keyword_ids = ids(run(SearchMode::kKeyword));
  const auto vector_ids = ids(run(SearchMode::kVector));
  ASSERT_NE(keyword_ids, vector_ids);  // else the test could not tell them apart
  SearchResult r = run(SearchMode::kHybrid);
  EXPECT_EQ(ids(r), keyword_ids);
  EXPECT_EQ(r.alpha, 0);

  auto info = db_->SetDefaultFusion("c", "weighted", 1);
  ASSERT_TRUE(info.ok()) << info.status();
  EXPECT_EQ(info->spec.fusion, "weighted");
  EXPECT_EQ(info->spec.fusion_alpha, 1);
  r = run(SearchMode::kHybrid);
  EXPECT_EQ(ids(r), vector_ids);
  EXPECT_EQ(r.alpha, 1);
  // A query that names a fusion gets it, not the collection's.
  keyword::FusionOptions keyword_only;
  keyword_only.method = keyword::FusionMethod::kWeighted;
  keyword_only.alpha = 0;
  EXPECT_EQ(ids(run(SearchMode::kHybrid, keyword_only)), keyword_ids);

  // Bad values change nothing.
  EXPECT_EQ(db_->SetDefaultFusion("c", "klingon", 0.5).status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(db_->SetDefaultFusion("c", "weighted", -0.1).status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(db_->SetDefaultFusion("nope", "rrf", 0.5).status().code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(ids(run(SearchMode::kHybrid)), vector_ids);

  // Persisted with the spec.
  Open();
  auto described = db_->DescribeCollection("c");
  ASSERT_TRUE(described.ok()) << described.status();
  EXPECT_EQ(described->spec.fusion, "weighted");
  EXPECT_EQ(described->spec.fusion_alpha, 1);
  EXPECT_EQ(ids(run(SearchMode::kHybrid)), vector_ids);
  ASSERT_TRUE(db_->SetDefaultFusion("c", "adaptive", 0.5).ok());
  const SearchResult by_default = run(SearchMode::kHybrid);
  const SearchResult adaptive = run(SearchMode::kHybrid, keyword::FusionOptions{});
  EXPECT_EQ(ids(by_default), ids(adaptive));
  EXPECT_EQ(by_default.alpha, adaptive.alpha);
  EXPECT_LE(by_default.alpha, 0.5);
}

}  // namespace
}  // namespace neodb::engine
