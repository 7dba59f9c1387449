// Property tests of the query features past plain top-k, through
// engine::Database: score threshold and offset paging, recommend (positive
// and negative examples) and group-by. Random documents with small-integer
// vectors under the inner-product metric, so every score is exact in float
// and ties are real (broken by document id, as the engine promises); each
// answer must equal the brute-force evaluation below, written from the
// contracts in search_params.h, recommend.h and grouped_search.h without
// the engine's code. Seeds are fixed and printed.
// Text queries (keyword, hybrid) cannot be brute-forced here: for them the
// test checks that paging and the threshold are slices of the plain answer,
// and that a batch answers as the single queries do.
#include <algorithm>
#include <cmath>
#include <iostream>
#include <map>
#include <optional>
#include <random>
#include <set>

#include "absl/strings/str_cat.h"
#include "db/filter.h"
#include "engine/database.h"
#include "engine/fake_embedder.h"
#include "gtest/gtest.h"
#include "tests/engine/engine_test_util.h"

namespace neodb::engine {
namespace {

constexpr int kDim = 4;
constexpr uint64_t kSeeds[] = {1, 7, 20240501};
constexpr int kDocs = 120;

using Vec = std::vector<float>;

struct Doc {
  Vec vector;
  db::Metadata metadata;
};

class Gen {
 public:
  explicit Gen(uint64_t seed) : rng_(seed) {}
  int Next(int n) { return static_cast<int>(rng_() % static_cast<uint64_t>(n)); }
  bool Chance(int percent) { return Next(100) < percent; }
  Vec Vector() {
    Vec v(kDim);
    for (float& x : v) x = static_cast<float>(Next(7) - 3);
    if (std::all_of(v.begin(), v.end(), [](float x) { return x == 0; })) v[0] = 1;
    return v;
  }
  db::Metadata Metadata() {
    db::Metadata m;
    m["year"] = static_cast<int64_t>(2015 + Next(10));
    // The group field: strings, ints (a different value from the string
    // "1"), sometimes missing.
    if (!Chance(15)) {
      if (Chance(70)) {
        m["g"] = std::string(1, "abcde"[Next(5)]);
      } else {
        m["g"] = static_cast<int64_t>(Next(3));
      }
    }
    if (Chance(80)) {
      db::Object o;
      o.fields["k"] = static_cast<int64_t>(Next(4));
      m["n"] = o;
    }
    return m;
  }

 private:
  std::mt19937_64 rng_;
};

double Dot(const Vec& a, const Vec& b) {
  double s = 0;
  for (int i = 0; i < kDim; ++i) s += static_cast<double>(a[i]) * b[i];
  return s;
}

struct Expected {
  std::string id;
  double score;
};

// Every live document passing `min_year`, not excluded, best first, ties by id.
std::vector<Expected> BruteRank(const std::map<std::string, Doc>& live, const Vec& q,
                                std::optional<int64_t> min_year,
                                const std::set<std::string>& excluded = {}) {
  std::vector<Expected> r;
  for (const auto& [id, d] : live) {
    if (excluded.count(id)) continue;
    if (min_year && std::get<int64_t>(d.metadata.at("year")) < *min_year) continue;
    r.push_back({id, Dot(q, d.vector)});
  }
  std::sort(r.begin(), r.end(), [](const Expected& a, const Expected& b) {
    return a.score != b.score ? a.score > b.score : a.id < b.id;
  });
  return r;
}

std::vector<Expected> Page(const std::vector<Expected>& ranked, int offset, int k,
                           std::optional<float> threshold) {
  std::vector<Expected> out;
  for (int i = offset; i < offset + k && i < static_cast<int>(ranked.size()); ++i) {
    if (threshold && ranked[i].score < *threshold) break;
    out.push_back(ranked[i]);
  }
  return out;
}

std::string Show(const std::vector<Expected>& hits) {
  std::string s;
  for (const auto& h : hits) absl::StrAppend(&s, h.id, ":", h.score, " ");
  return s;
}
std::string Show(const std::vector<Hit>& hits) {
  std::string s;
  for (const auto& h : hits) absl::StrAppend(&s, h.id, ":", h.score, " ");
  return s;
}

void ExpectHits(const std::vector<Hit>& got, const std::vector<Expected>& want) {
  ASSERT_EQ(got.size(), want.size()) << "got " << Show(got) << "\nwant " << Show(want);
  for (size_t i = 0; i < got.size(); ++i) {
    EXPECT_EQ(got[i].id, want[i].id) << "at " << i << "\ngot " << Show(got) << "\nwant "
                                     << Show(want);
    EXPECT_EQ(got[i].score, static_cast<float>(want[i].score)) << got[i].id;
  }
}

class QueryFeaturesTest : public EngineTest {
 protected:
  // A Flat inner-product collection of client vectors, `kDocs` documents
  // written in random order, a fifth overwritten, a tenth deleted.
  void Fill(uint64_t seed, Gen& g) {
    TearDown();
    SetUp();
    OpenWith(BaseOptions(), std::make_unique<FakeEmbedder>(kDim, 32, 1));
    db::CollectionSpec spec;
    spec.name = "c";
    spec.index_spec = "Flat";
    spec.metric = "ip";
    VectorOptions v;
    v.source = VectorSource::kExternal;
    v.dimension = kDim;
    ASSERT_TRUE(db_->CreateCollection(spec, v).ok());
    std::vector<int> order(kDocs);
    for (int i = 0; i < kDocs; ++i) order[i] = i;
    std::shuffle(order.begin(), order.end(), std::mt19937_64(seed));
    auto write = [&](const std::string& id) {
      Doc d{g.Vector(), g.Metadata()};
      DocumentInput in;
      in.id = id;
      in.vector = d.vector;
      in.metadata = d.metadata;
      auto r = db_->Upsert("c", {in}, absl::InfiniteFuture());
      ASSERT_TRUE(r.ok()) << r.status();
      live_[id] = d;
    };
    live_.clear();
    for (int i : order) write(absl::StrCat("d", 100 + i));
    for (int i = 0; i < kDocs / 5; ++i) write(absl::StrCat("d", 100 + g.Next(kDocs)));
    for (int i = 0; i < kDocs / 10; ++i) {
      const std::string id = absl::StrCat("d", 100 + g.Next(kDocs));
      ASSERT_TRUE(db_->Delete("c", {id}).ok());
      live_.erase(id);
    }
  }

  // A random filter (year >= y) or none, into `params`.
  std::optional<int64_t> MaybeFilter(Gen& g, SearchParams* params) {
    if (!g.Chance(40)) return std::nullopt;
    const int64_t year = 2015 + g.Next(10);
    auto f = db::ParseFilterJson(absl::StrCat(R"({"field":"year","gte":)", year, "}"));
    EXPECT_TRUE(f.ok()) << f.status();
    params->filter = std::move(*f);
    return year;
  }

  std::map<std::string, Doc> live_;
};

TEST_F(QueryFeaturesTest, ThresholdAndOffsetEqualBruteForce) {
  constexpr int kQueries = 400;
  size_t cases = 0, cut_by_threshold = 0, past_end = 0;
  for (const uint64_t seed : kSeeds) {
    std::cout << "[ seed     ] " << seed << ": " << kDocs << " documents, " << kQueries
              << " queries\n";
    SCOPED_TRACE(absl::StrCat("seed ", seed));
    Gen g(seed);
    ASSERT_NO_FATAL_FAILURE(Fill(seed, g));
    for (int i = 0; i < kQueries; ++i) {
      SCOPED_TRACE(absl::StrCat("query ", i));
      const Vec q = g.Vector();
      SearchParams p;
      p.k = 1 + g.Next(20);
      p.offset = g.Chance(70) ? g.Next(130) : 0;
      if (g.Chance(50)) p.score_threshold = static_cast<float>(g.Next(13) - 6);
      const std::optional<int64_t> year = MaybeFilter(g, &p);
      auto r = db_->NearVector("c", q, p);
      ASSERT_TRUE(r.ok()) << r.status();
      const std::vector<Expected> all = BruteRank(live_, q, year);
      const std::vector<Expected> want = Page(all, p.offset, p.k, p.score_threshold);
      ASSERT_NO_FATAL_FAILURE(ExpectHits(r->hits, want));
      ++cases;
      if (want.size() < Page(all, p.offset, p.k, std::nullopt).size()) ++cut_by_threshold;
      if (p.offset + p.k > static_cast<int>(all.size())) ++past_end;
    }
  }
  std::cout << "[ checked  ] " << cases << " queries (" << cut_by_threshold
            << " cut by the threshold, " << past_end << " paging past the end)\n";
}

TEST_F(QueryFeaturesTest, OffsetAndThresholdAreRefusedOutOfRange) {
  Gen g(1);
  ASSERT_NO_FATAL_FAILURE(Fill(1, g));
  SearchParams p;
  p.k = 10;
  p.offset = kMaxSearchK - 9;
  auto r = db_->NearVector("c", g.Vector(), p);
  EXPECT_TRUE(absl::IsInvalidArgument(r.status())) << r.status();
  EXPECT_NE(r.status().message().find("offset"), std::string::npos) << r.status();
  p.offset = -1;
  EXPECT_TRUE(absl::IsInvalidArgument(db_->NearVector("c", g.Vector(), p).status()));
  p.offset = kMaxSearchK - 10;
  EXPECT_TRUE(db_->NearVector("c", g.Vector(), p).ok());
  p.offset = 0;
  p.score_threshold = std::nanf("");
  r = db_->NearVector("c", g.Vector(), p);
  EXPECT_TRUE(absl::IsInvalidArgument(r.status())) << r.status();
  EXPECT_NE(r.status().message().find("score_threshold"), std::string::npos);
}

TEST_F(QueryFeaturesTest, RecommendEqualsBruteForce) {
  constexpr int kQueries = 200;
  size_t cases = 0, with_negatives = 0;
  for (const uint64_t seed : kSeeds) {
    std::cout << "[ seed     ] " << seed << ": " << kDocs << " documents, " << kQueries
              << " recommend queries\n";
    SCOPED_TRACE(absl::StrCat("seed ", seed));
    Gen g(seed + 1000);
    ASSERT_NO_FATAL_FAILURE(Fill(seed, g));
    std::vector<std::string> ids;
    for (const auto& [id, d] : live_) ids.push_back(id);
    for (int i = 0; i < kQueries; ++i) {
      SCOPED_TRACE(absl::StrCat("query ", i));
      // 1, 2 or 4 positives and 0, 1, 2 or 4 negatives (powers of two keep
      // the means exact), each an id or a raw vector.
      const int np = 1 << g.Next(3);
      const int nn = g.Chance(25) ? 0 : 1 << g.Next(3);
      RecommendQuery rq;
      std::vector<Vec> pos, neg;
      std::set<std::string> examples;
      auto pick = [&](std::vector<std::string>* out_ids, std::vector<Vec>* out_vectors,
                      std::vector<Vec>* all) {
        if (g.Chance(60)) {
          std::string id;
          do id = ids[g.Next(static_cast<int>(ids.size()))];
          while (examples.count(id));
          examples.insert(id);
          out_ids->push_back(id);
          all->push_back(live_.at(id).vector);
        } else {
          out_vectors->push_back(g.Vector());
          all->push_back(out_vectors->back());
        }
      };
      for (int j = 0; j < np; ++j) pick(&rq.positive_ids, &rq.positive_vectors, &pos);
      for (int j = 0; j < nn; ++j) pick(&rq.negative_ids, &rq.negative_vectors, &neg);
      rq.negative_weight = std::vector<double>{0, 0.5, 1, 2}[g.Next(4)];
      SearchParams p;
      p.k = 1 + g.Next(15);
      p.offset = g.Chance(30) ? g.Next(20) : 0;
      const std::optional<int64_t> year = MaybeFilter(g, &p);
      // q = P + w (P - N), from recommend.h's formula.
      Vec q(kDim);
      for (int d = 0; d < kDim; ++d) {
        double pm = 0, nm = 0;
        for (const Vec& v : pos) pm += v[d];
        pm /= static_cast<double>(pos.size());
        if (neg.empty()) {
          q[d] = static_cast<float>(pm);
          continue;
        }
        for (const Vec& v : neg) nm += v[d];
        nm /= static_cast<double>(neg.size());
        q[d] = static_cast<float>(pm + rq.negative_weight * (pm - nm));
      }
      auto r = db_->Recommend("c", rq, p);
      ASSERT_TRUE(r.ok()) << r.status();
      const std::vector<Expected> want =
          Page(BruteRank(live_, q, year, examples), p.offset, p.k, std::nullopt);
      ASSERT_NO_FATAL_FAILURE(ExpectHits(r->hits, want));
      ++cases;
      if (nn > 0) ++with_negatives;
    }
  }
  std::cout << "[ checked  ] " << cases << " recommend queries (" << with_negatives
            << " with negatives)\n";
}

TEST_F(QueryFeaturesTest, RecommendRefusesUnknownIdsAndMalformedQueries) {
  Gen g(7);
  ASSERT_NO_FATAL_FAILURE(Fill(7, g));
  const std::string known = live_.begin()->first;
  RecommendQuery rq;
  rq.positive_ids = {known, "nope-1"};
  rq.negative_ids = {"nope-2"};
  auto r = db_->Recommend("c", rq, SearchParams{});
  ASSERT_TRUE(absl::IsNotFound(r.status())) << r.status();
  EXPECT_NE(r.status().message().find("nope-1"), std::string::npos) << r.status();
  EXPECT_NE(r.status().message().find("nope-2"), std::string::npos) << r.status();
  EXPECT_EQ(r.status().message().find(known), std::string::npos) << r.status();

  RecommendQuery none;
  none.negative_ids = {known};
  r = db_->Recommend("c", none, SearchParams{});
  EXPECT_TRUE(absl::IsInvalidArgument(r.status())) << r.status();
  RecommendQuery twice;
  twice.positive_ids = {known};
  twice.negative_ids = {known};
  r = db_->Recommend("c", twice, SearchParams{});
  EXPECT_TRUE(absl::IsInvalidArgument(r.status())) << r.status();
  RecommendQuery wrong_dim;
  wrong_dim.positive_vectors = {Vec(kDim + 1, 1.0f)};
  r = db_->Recommend("c", wrong_dim, SearchParams{});
  EXPECT_TRUE(absl::IsInvalidArgument(r.status())) << r.status();
  RecommendQuery weight;
  weight.positive_ids = {known};
  weight.negative_weight = -1;
  r = db_->Recommend("c", weight, SearchParams{});
  EXPECT_TRUE(absl::IsInvalidArgument(r.status())) << r.status();
  EXPECT_NE(r.status().message().find("negative_weight"), std::string::npos) << r.status();
}

// The groups grouped_search.h promises, from the whole ranking.
std::vector<std::pair<db::Value, std::vector<Expected>>> BruteGroups(
    const std::map<std::string, Doc>& live, const std::vector<Expected>& ranked,
    const std::string& field, int groups, int group_size, std::optional<float> threshold) {
  std::vector<std::pair<db::Value, std::vector<Expected>>> out;
  for (const Expected& e : ranked) {
    if (threshold && e.score < *threshold) break;
    const db::Metadata& m = live.at(e.id).metadata;
    std::optional<db::Value> v;
    if (field == "n.k") {
      auto n = m.find("n");
      if (n != m.end()) v = std::get<db::Object>(n->second).fields.at("k");
    } else if (auto it = m.find(field); it != m.end()) {
      v = it->second;
    }
    if (!v) continue;
    auto g = std::find_if(out.begin(), out.end(), [&](const auto& x) { return x.first == *v; });
    if (g == out.end()) {
      if (static_cast<int>(out.size()) == groups) continue;
      out.push_back({*v, {}});
      g = out.end() - 1;
    }
    if (static_cast<int>(g->second.size()) < group_size) g->second.push_back(e);
  }
  return out;
}

TEST_F(QueryFeaturesTest, GroupByEqualsBruteForce) {
  constexpr int kQueries = 300;
  size_t cases = 0, short_groups = 0;
  for (const uint64_t seed : kSeeds) {
    std::cout << "[ seed     ] " << seed << ": " << kDocs << " documents, " << kQueries
              << " grouped queries\n";
    SCOPED_TRACE(absl::StrCat("seed ", seed));
    Gen g(seed + 2000);
    ASSERT_NO_FATAL_FAILURE(Fill(seed, g));
    for (int i = 0; i < kQueries; ++i) {
      SCOPED_TRACE(absl::StrCat("query ", i));
      const Vec q = g.Vector();
      SearchParams p;
      GroupBy by;
      by.field = g.Chance(60) ? "g" : "n.k";
      by.groups = 1 + g.Next(9);
      by.group_size = 1 + g.Next(5);
      p.group_by = by;
      p.include_metadata = g.Chance(50);
      if (g.Chance(30)) p.score_threshold = static_cast<float>(g.Next(9) - 4);
      const std::optional<int64_t> year = MaybeFilter(g, &p);
      auto r = db_->NearVector("c", q, p);
      ASSERT_TRUE(r.ok()) << r.status();
      EXPECT_TRUE(r->hits.empty());
      const auto want = BruteGroups(live_, BruteRank(live_, q, year), by.field, by.groups,
                                    by.group_size, p.score_threshold);
      ASSERT_EQ(r->groups.size(), want.size());
      for (size_t j = 0; j < want.size(); ++j) {
        EXPECT_TRUE(r->groups[j].value == want[j].first) << "group " << j;
        ASSERT_NO_FATAL_FAILURE(ExpectHits(r->groups[j].hits, want[j].second));
        if (static_cast<int>(want[j].second.size()) < by.group_size) ++short_groups;
        for (const Hit& h : r->groups[j].hits) {
          EXPECT_EQ(h.metadata.empty(), !p.include_metadata || live_.at(h.id).metadata.empty());
        }
      }
      ++cases;
    }
  }
  std::cout << "[ checked  ] " << cases << " grouped queries (" << short_groups
            << " groups short of group_size: the collection exhausted)\n";
}

TEST_F(QueryFeaturesTest, GroupByRefusesMalformedRequests) {
  Gen g(1);
  ASSERT_NO_FATAL_FAILURE(Fill(1, g));
  auto refused = [&](GroupBy by, int offset, const std::string& names) {
    SearchParams p;
    p.group_by = by;
    p.offset = offset;
    auto r = db_->NearVector("c", g.Vector(), p);
    EXPECT_TRUE(absl::IsInvalidArgument(r.status())) << r.status();
    EXPECT_NE(r.status().message().find(names), std::string::npos) << r.status();
  };
  refused(GroupBy{"", 3, 1}, 0, "group_by.field");
  refused(GroupBy{"g", 0, 1}, 0, "group_by.groups");
  refused(GroupBy{"g", 3, kMaxGroupSize + 1}, 0, "group_by.group_size");
  refused(GroupBy{"g", 100, 11}, 0, "group_by.groups * group_by.group_size");
  refused(GroupBy{"g", 3, 1}, 5, "offset");
}

}  // namespace
}  // namespace neodb::engine
