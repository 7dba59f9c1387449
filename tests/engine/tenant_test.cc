// Multi-tenant collections in the engine (engine/tenant_scope.h): a
// collection of many tenants, the same user ids in several of them, random
// texts, vectors and metadata (fixed seeds). For every tenant, each read is
// checked against a brute-force model of that tenant alone:
// - near-vector hits are exactly the tenant's top k by cosine (scores too),
//   with a filter as well, and carry the tenant's own ids;
// - keyword hits and BM25 scores equal those of a single-tenant collection
//   that holds the tenant's documents only (its own corpus statistics);
// - hybrid, recommend and batch queries never return another tenant's id;
// - counts, lists (paged, and with a page token forged to point into another
//   tenant) and the tenant list match the model;
// - delete and update by filter, and deleting a tenant, touch that tenant
//   only; all of it holds after a restart.
// Calls that name no tenant on such a collection, or one on an ordinary
// collection, or a malformed one, are INVALID_ARGUMENT.
#include <algorithm>
#include <cmath>
#include <map>
#include <random>
#include <set>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "db/filter.h"
#include "engine/database.h"
#include "engine/fake_embedder.h"
#include "gtest/gtest.h"
#include "tests/engine/engine_test_util.h"

namespace neodb::engine {
namespace {

constexpr int kDim = 8;
constexpr int kTenants = 12;
const char* kWords[] = {"alpha", "beta", "gamma", "delta", "omega", "sigma", "kappa", "theta"};

struct Doc {
  std::string text;
  std::vector<float> vector;
  db::Metadata metadata;
};

std::string TenantName(int t) { return absl::StrCat("t", t); }

float Cosine(const std::vector<float>& a, const std::vector<float>& b) {
  double dot = 0, na = 0, nb = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    dot += double(a[i]) * b[i];
    na += double(a[i]) * a[i];
    nb += double(b[i]) * b[i];
  }
  return static_cast<float>(dot / std::sqrt(na * nb));
}

db::Filter ParseOrDie(const std::string& json) {
  auto f = db::ParseFilterJson(json);
  EXPECT_TRUE(f.ok()) << json << ": " << f.status();
  return *f;
}

class TenantTest : public EngineTest {
 protected:
  void Open() { OpenWith(BaseOptions(), std::make_unique<FakeEmbedder>(kDim, 64, 1)); }

  // "mt": kTenants tenants of 5..80 documents; ids "doc-0".. in every tenant
  // (so the same id names a document in each). Vectors are the client's:
  // the test knows them exactly.
  void Fill(uint64_t seed) {
    Open();
    db::CollectionSpec spec;
    spec.name = "mt";
    spec.index_spec = "HNSW16";
    spec.multi_tenant = true;
    VectorOptions ext;
    ext.source = VectorSource::kExternal;
    ext.dimension = kDim;
    ext.query_model = "default";  // the fake model embeds near-text queries
    ASSERT_TRUE(db_->CreateCollection(spec, ext).ok());
    std::mt19937_64 rng(seed);
    std::normal_distribution<float> normal;
    for (int t = 0; t < kTenants; ++t) {
      const int n = 5 + static_cast<int>(rng() % 76);
      std::vector<DocumentInput> batch;
      for (int i = 0; i < n; ++i) {
        DocumentInput in;
        const std::string id = absl::StrCat("doc-", i);
        in.id = absl::StrCat(TenantName(t), "/", id);
        std::string text;
        for (int w = 0; w < 6; ++w) text += absl::StrCat(kWords[rng() % 8], " ");
        in.text = text;
        in.vector.emplace();
        for (int d = 0; d < kDim; ++d) in.vector->push_back(normal(rng));
        in.metadata["year"] = static_cast<int64_t>(2018 + rng() % 6);
        model_[TenantName(t)][id] = Doc{in.text, *in.vector, in.metadata};
        batch.push_back(std::move(in));
      }
      ASSERT_TRUE(db_->Upsert("mt", std::move(batch), absl::InfiniteFuture()).ok());
    }
  }

  // A single-tenant collection holding tenant `t`'s documents alone.
  void MakeSolo(const std::string& name, const std::string& t) {
    db::CollectionSpec spec;
    spec.name = name;
    spec.index_spec = "Flat";
    VectorOptions ext;
    ext.source = VectorSource::kExternal;
    ext.dimension = kDim;
    ASSERT_TRUE(db_->CreateCollection(spec, ext).ok());
    std::vector<DocumentInput> batch;
    for (const auto& [id, d] : model_[t]) {
      DocumentInput in;
      in.id = id;
      in.text = d.text;
      in.vector = d.vector;
      in.metadata = d.metadata;
      batch.push_back(std::move(in));
    }
    ASSERT_TRUE(db_->Upsert(name, std::move(batch), absl::InfiniteFuture()).ok());
  }

  SearchParams Params(const std::string& tenant, int k) {
    SearchParams p;
    p.k = k;
    p.tenant = tenant;
    return p;
  }

  // Brute force: the tenant's top k by cosine to `q` among the documents
  // `filter` accepts (all when null).
  std::vector<std::pair<std::string, float>> Exact(const std::string& t,
                                                   const std::vector<float>& q, int k,
                                                   const db::Filter* filter) {
    std::vector<std::pair<std::string, float>> all;
    for (const auto& [id, d] : model_[t]) {
      if (filter == nullptr || filter->Matches(d.metadata)) {
        all.emplace_back(id, Cosine(q, d.vector));
      }
    }
    std::sort(all.begin(), all.end(), [](const auto& a, const auto& b) {
      return a.second != b.second ? a.second > b.second : a.first < b.first;
    });
    if (all.size() > static_cast<size_t>(k)) all.resize(k);
    return all;
  }

  void ExpectCounts(const std::string& when) {
    SCOPED_TRACE(when);
    auto tenants = db_->Tenants("mt");
    ASSERT_TRUE(tenants.ok()) << tenants.status();
    std::vector<std::pair<std::string, uint64_t>> want;
    for (const auto& [t, docs] : model_) {
      if (!docs.empty()) want.emplace_back(t, docs.size());
    }
    EXPECT_EQ(*tenants, want);
    for (const auto& [t, docs] : model_) {
      auto n = db_->Count("mt", nullptr, t);
      ASSERT_TRUE(n.ok()) << n.status();
      EXPECT_EQ(*n, docs.size()) << t;
      // Paged list: exactly the tenant's documents, under the stored ids.
      std::set<std::string> listed;
      std::string token;
      do {
        auto page = db_->List("mt", token, 7, t);
        ASSERT_TRUE(page.ok()) << page.status();
        for (const auto& d : page->documents) {
          EXPECT_TRUE(d.id.starts_with(t + "/")) << d.id;
          listed.insert(d.id.substr(t.size() + 1));
        }
        token = page->next_page_token;
      } while (!token.empty());
      std::set<std::string> ids;
      for (const auto& [id, d] : docs) ids.insert(id);
      EXPECT_EQ(listed, ids) << t;
    }
  }

  std::map<std::string, std::map<std::string, Doc>> model_;  // tenant -> id -> doc
};

TEST_F(TenantTest, NearVectorIsTheTenantsExactTopK) {
  Fill(7);
  std::mt19937_64 rng(11);
  std::normal_distribution<float> normal;
  const db::Filter recent = ParseOrDie(R"({"field":"year","gte":2021})");
  for (const auto& [t, docs] : model_) {
    for (int trial = 0; trial < 5; ++trial) {
      std::vector<float> q;
      for (int d = 0; d < kDim; ++d) q.push_back(normal(rng));
      for (const db::Filter* f : {static_cast<const db::Filter*>(nullptr), &recent}) {
        SearchParams p = Params(t, 10);
        if (f) p.filter = *f;
        auto r = db_->NearVector("mt", q, p);
        ASSERT_TRUE(r.ok()) << r.status();
        const auto want = Exact(t, q, 10, f);
        ASSERT_EQ(r->hits.size(), want.size()) << t;
        for (size_t i = 0; i < want.size(); ++i) {
          EXPECT_EQ(r->hits[i].id, want[i].first) << t << " rank " << i;
          EXPECT_NEAR(r->hits[i].score, want[i].second, 1e-5) << t;
        }
      }
    }
  }
}

TEST_F(TenantTest, KeywordScoresAreTheTenantsOwn) {
  Fill(8);
  for (const std::string t : {"t0", "t5", "t11"}) {
    MakeSolo("solo_" + t, t);
    for (const std::string query : {"alpha", "gamma delta", "omega sigma kappa"}) {
      SearchParams p = Params(t, 20);
      p.mode = SearchMode::kKeyword;
      auto mt = db_->NearText("mt", query, std::nullopt, p, absl::InfiniteFuture());
      ASSERT_TRUE(mt.ok()) << mt.status();
      p.tenant.clear();
      auto solo = db_->NearText("solo_" + t, query, std::nullopt, p, absl::InfiniteFuture());
      ASSERT_TRUE(solo.ok()) << solo.status();
      ASSERT_EQ(mt->hits.size(), solo->hits.size()) << t << " " << query;
      for (size_t i = 0; i < mt->hits.size(); ++i) {
        EXPECT_EQ(mt->hits[i].id, solo->hits[i].id) << t << " " << query << " rank " << i;
        EXPECT_NEAR(mt->hits[i].score, solo->hits[i].score, 1e-4 * solo->hits[i].score);
      }
    }
  }
}

TEST_F(TenantTest, NoSearchReturnsAnotherTenantsDocument) {
  Fill(9);
  for (const auto& [t, docs] : model_) {
    for (SearchMode mode : {SearchMode::kKeyword, SearchMode::kHybrid, SearchMode::kVector}) {
      SearchParams p = Params(t, 50);
      p.mode = mode;
      p.include_metadata = true;
      auto r = db_->NearText("mt", "alpha beta", std::nullopt, p, absl::InfiniteFuture());
      ASSERT_TRUE(r.ok()) << r.status();
      for (const Hit& h : r->hits) EXPECT_TRUE(docs.contains(h.id)) << t << ": " << h.id;
    }
    // Recommend by the tenant's own ids; "doc-0" exists in every tenant.
    RecommendQuery rq;
    rq.positive_ids = {"doc-0"};
    if (docs.contains("doc-3")) rq.negative_ids = {"doc-3"};
    auto r = db_->Recommend("mt", rq, Params(t, 50));
    ASSERT_TRUE(r.ok()) << r.status();
    for (const Hit& h : r->hits) {
      EXPECT_TRUE(docs.contains(h.id)) << h.id;
      EXPECT_NE(h.id, "doc-0");
    }
    // Grouped, batched.
    SearchParams g = Params(t, 10);
    g.group_by = GroupBy{"year", 10, 3};
    auto grouped = db_->NearVector("mt", docs.begin()->second.vector, g);
    ASSERT_TRUE(grouped.ok()) << grouped.status();
    for (const HitGroup& group : grouped->groups) {
      for (const Hit& h : group.hits) EXPECT_TRUE(docs.contains(h.id)) << h.id;
    }
    Database::TextQuery tq{"gamma", std::nullopt, Params(t, 50)};
    tq.params.mode = SearchMode::kKeyword;
    auto batch = db_->BatchNearText("mt", {tq, tq}, absl::InfiniteFuture());
    ASSERT_TRUE(batch.ok()) << batch.status();
    for (const auto& answer : *batch) {
      ASSERT_TRUE(answer.ok()) << answer.status();
      for (const Hit& h : answer->hits) EXPECT_TRUE(docs.contains(h.id)) << h.id;
    }
  }
  // Another tenant's example id is simply unknown here.
  RecommendQuery rq;
  rq.positive_ids = {"doc-79"};
  model_["t0"].erase("doc-79");
  for (const auto& [t, docs] : model_) {
    if (docs.contains("doc-79")) continue;
    EXPECT_EQ(db_->Recommend("mt", rq, Params(t, 5)).status().code(), absl::StatusCode::kNotFound);
    break;
  }
}

TEST_F(TenantTest, CountsListsAndSelectionsStayInTheTenant) {
  Fill(10);
  ExpectCounts("filled");
  const db::Filter old = ParseOrDie(R"({"field":"year","lt":2020})");
  // Count by filter.
  for (const auto& [t, docs] : model_) {
    uint64_t want = 0;
    for (const auto& [id, d] : docs) want += old.Matches(d.metadata) ? 1 : 0;
    auto n = db_->Count("mt", &old, t);
    ASSERT_TRUE(n.ok());
    EXPECT_EQ(*n, want) << t;
  }
  // A page token forged to start inside another tenant lists this one's.
  const std::string forged = absl::BytesToHexString(std::string(1, '1') + "t9/doc-0");
  auto page = db_->List("mt", forged, 1000, "t1");
  ASSERT_TRUE(page.ok()) << page.status();
  for (const auto& d : page->documents) EXPECT_TRUE(d.id.starts_with("t1/")) << d.id;
  // Delete by filter in t2; update by filter in t3; delete tenant t4.
  auto deleted = db_->DeleteWhere("mt", &old, "t2");
  ASSERT_TRUE(deleted.ok()) << deleted.status();
  uint64_t want_deleted = 0;
  for (auto it = model_["t2"].begin(); it != model_["t2"].end();) {
    if (old.Matches(it->second.metadata)) {
      it = model_["t2"].erase(it);
      ++want_deleted;
    } else {
      ++it;
    }
  }
  EXPECT_EQ(*deleted, want_deleted);
  DocumentSelection which;
  which.filter = old;
  which.tenant = "t3";
  MetadataPatch patch;
  patch.metadata["flag"] = true;
  auto updated = db_->UpdateMetadata("mt", which, patch);
  ASSERT_TRUE(updated.ok()) << updated.status();
  for (auto& [id, d] : model_["t3"]) {
    if (old.Matches(d.metadata)) d.metadata["flag"] = true;
  }
  const db::Filter flagged = ParseOrDie(R"({"field":"flag","exists":true})");
  for (const auto& [t, docs] : model_) {
    auto n = db_->Count("mt", &flagged, t);
    ASSERT_TRUE(n.ok());
    EXPECT_EQ(*n, t == "t3" ? updated->updated : 0u) << t;
  }
  auto gone = db_->DeleteWhere("mt", nullptr, "t4");
  ASSERT_TRUE(gone.ok()) << gone.status();
  EXPECT_EQ(*gone, model_["t4"].size());
  model_["t4"].clear();
  ExpectCounts("after deletes and updates");
  // Updates by ids must be the tenant's.
  DocumentSelection foreign;
  foreign.ids = {"t5/doc-0"};
  foreign.tenant = "t6";
  EXPECT_EQ(db_->UpdateMetadata("mt", foreign, patch).status().code(),
            absl::StatusCode::kInvalidArgument);
  // Everything holds after a restart (the tenants' ids are rebuilt).
  db_.reset();
  Open();
  ExpectCounts("after a restart");
  auto v = db_->Verify("mt");
  ASSERT_TRUE(v.ok()) << v.status();
  EXPECT_EQ(v->missing_from_index, 0u);
  EXPECT_EQ(v->stale_in_index, 0u);
}

TEST_F(TenantTest, CallsNamingTheWrongTenantAreRefused) {
  Fill(12);
  MakeSolo("plain", "t0");
  const auto invalid = absl::StatusCode::kInvalidArgument;
  const db::Filter f = ParseOrDie(R"({"field":"year","gte":2000})");
  std::vector<float> q(kDim, 1.0f);
  // No tenant on a multi-tenant collection.
  EXPECT_EQ(db_->Count("mt", nullptr).status().code(), invalid);
  EXPECT_EQ(db_->List("mt", "", 10).status().code(), invalid);
  EXPECT_EQ(db_->NearVector("mt", q, Params("", 5)).status().code(), invalid);
  SearchParams kw = Params("", 5);
  kw.mode = SearchMode::kKeyword;
  EXPECT_EQ(db_->NearText("mt", "alpha", std::nullopt, kw, absl::InfiniteFuture()).status().code(),
            invalid);
  EXPECT_EQ(db_->DeleteWhere("mt", &f).status().code(), invalid);
  EXPECT_EQ(db_->ScopeOf("mt", "").status().code(), invalid);
  // A document written without its tenant's prefix belongs to nobody.
  DocumentInput orphan;
  orphan.id = "orphan";
  orphan.text = "x";
  orphan.vector = q;
  EXPECT_EQ(db_->Upsert("mt", {orphan}, absl::InfiniteFuture()).status().code(), invalid);
  // A tenant on an ordinary collection; malformed tenant names.
  EXPECT_EQ(db_->Count("plain", nullptr, "t0").status().code(), invalid);
  EXPECT_EQ(db_->NearVector("plain", q, Params("t0", 5)).status().code(), invalid);
  const std::vector<std::string> bad_names = {"a/b", std::string(65, 'x'), "sp ace", "é"};
  for (const std::string& bad : bad_names) {
    EXPECT_EQ(db_->Count("mt", nullptr, bad).status().code(), invalid) << bad;
  }
  // Deleting without a filter needs a tenant.
  EXPECT_EQ(db_->DeleteWhere("plain", nullptr).status().code(), invalid);
  EXPECT_EQ(db_->Tenants("plain").status().code(), absl::StatusCode::kFailedPrecondition);
  // An unknown tenant has nothing.
  auto none = db_->Count("mt", nullptr, "nobody");
  ASSERT_TRUE(none.ok());
  EXPECT_EQ(*none, 0u);
  auto r = db_->NearVector("mt", q, Params("nobody", 5));
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_TRUE(r->hits.empty());
}

TEST(TenantScopeTest, StoredIdsNeverCrossTenants) {
  db::CollectionSpec spec;
  spec.name = "mt";
  spec.multi_tenant = true;
  auto a = TenantScope::For(spec, "a");
  ASSERT_TRUE(a.ok());
  EXPECT_EQ(*a->Stored("b/x"), "a/b/x");  // the first '/' ends the tenant
  EXPECT_TRUE(a->Owns("a/b/x"));
  EXPECT_FALSE(a->Owns("b/x"));
  EXPECT_FALSE(a->Owns("a/"));
  EXPECT_FALSE(a->Owns("ab/x"));
  EXPECT_EQ(a->Visible("a/b/x"), "b/x");
  EXPECT_EQ(TenantOfStoredId("a/b/x"), "a");
  // The caller's limit is the store's less the prefix.
  EXPECT_TRUE(a->Stored(std::string(510, 'x')).ok());
  EXPECT_EQ(a->Stored(std::string(511, 'x')).status().code(), absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace neodb::engine
