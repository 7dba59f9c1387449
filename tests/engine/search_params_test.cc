// SearchParams: validated once, and carried down to FAISS untouched. An HNSW
// collection whose every search walks the graph (exactBelow=0, a sparse
// M=4) loses recall@10 against an exact collection of the same documents at
// ef_search 16 and recovers it at 256; the collection's own default beam
// (efSearch in its spec) applies when a query names none.
#include "engine/search_params.h"

#include <unistd.h>

#include <filesystem>
#include <random>
#include <set>

#include "absl/strings/str_cat.h"
#include "engine/database.h"
#include "engine/fake_embedder.h"
#include "gtest/gtest.h"

namespace neodb::engine {
namespace {

namespace fs = std::filesystem;
const absl::Time kFar = absl::InfiniteFuture();

TEST(SearchParamsTest, ValidateNamesTheField) {
  SearchParams p;
  EXPECT_TRUE(p.Validate().ok());
  p.k = 0;
  EXPECT_NE(p.Validate().message().find("k is 0"), std::string::npos);
  p.k = 10;
  p.index.ef_search = kMaxEfSearch + 1;
  EXPECT_NE(p.Validate().message().find("ef_search"), std::string::npos);
  p.index.ef_search = 0;
  p.index.nprobe = -1;
  EXPECT_NE(p.Validate().message().find("nprobe"), std::string::npos);
  p.index.nprobe = 0;
  p.filter = db::Filter::And({});
  EXPECT_EQ(p.Validate().code(), absl::StatusCode::kInvalidArgument);
}

class SearchRecallTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / absl::StrCat("neodb_recall_test_", getpid());
    fs::remove_all(dir_);
    DatabaseOptions o;
    o.data_dir = dir_.string();
    o.sync_writes = false;
    o.snapshot_interval = absl::ZeroDuration();
    auto db = Database::Open(o, std::make_unique<FakeEmbedder>(16, 64, 5));
    ASSERT_TRUE(db.ok()) << db.status();
    db_ = std::move(*db);
  }
  void TearDown() override {
    db_.reset();
    fs::remove_all(dir_);
  }

  static std::string RandomText(std::mt19937_64& rng, int words) {
    std::string s;
    for (int i = 0; i < words; ++i) absl::StrAppend(&s, i ? " " : "", "v", rng() % 2000);
    return s;
  }
  void Create(const std::string& name, const std::string& index) {
    db::CollectionSpec spec;
    spec.name = name;
    spec.index_spec = index;
    auto info = db_->CreateCollection(spec);
    ASSERT_TRUE(info.ok()) << info.status();
  }
  std::vector<std::string> Ids(const std::string& c, const std::string& q, int ef) {
    SearchParams p;
    p.k = 10;
    p.index.ef_search = ef;
    p.mode = SearchMode::kVector;  // the index's knobs: the vector leg alone
    auto r = db_->NearText(c, q, std::nullopt, p, kFar);
    EXPECT_TRUE(r.ok()) << r.status();
    std::vector<std::string> ids;
    if (r.ok())
      for (const auto& h : r->hits) ids.push_back(h.id);
    return ids;
  }

  fs::path dir_;
  std::unique_ptr<Database> db_;
};

TEST_F(SearchRecallTest, EfSearchReachesHnsw) {
  Create("exact", "Flat");
  Create("graph", "HNSW4,exactBelow=0");
  Create("graph_wide", "HNSW4,exactBelow=0,efSearch=256");
  std::mt19937_64 rng(11);
  const int kDocs = 4000;
  for (int start = 0; start < kDocs; start += 500) {
    std::vector<DocumentInput> docs;
    for (int i = start; i < start + 500; ++i) {
      docs.push_back({absl::StrCat("d", i), RandomText(rng, 3), {}});
    }
    for (const char* c : {"exact", "graph", "graph_wide"}) {
      ASSERT_TRUE(db_->Upsert(c, docs, kFar).ok());
    }
  }
  const int kQueries = 200;
  double hits16 = 0, hits256 = 0, hits_default_wide = 0;
  for (int q = 0; q < kQueries; ++q) {
    const std::string text = RandomText(rng, 2);
    auto truth_ids = Ids("exact", text, 0);
    ASSERT_EQ(truth_ids.size(), 10u);
    std::set<std::string> truth(truth_ids.begin(), truth_ids.end());
    auto count = [&](const std::vector<std::string>& ids) {
      int n = 0;
      for (const auto& id : ids) n += truth.count(id);
      return n;
    };
    hits16 += count(Ids("graph", text, 16));
    hits256 += count(Ids("graph", text, 256));
    hits_default_wide += count(Ids("graph_wide", text, 0));
  }
  const double recall16 = hits16 / (kQueries * 10.0);
  const double recall256 = hits256 / (kQueries * 10.0);
  const double recall_wide = hits_default_wide / (kQueries * 10.0);
  std::printf("recall@10: ef_search 16 %.3f, 256 %.3f, collection default 256 %.3f\n", recall16,
              recall256, recall_wide);
  EXPECT_GT(recall256, recall16 + 0.05);
  EXPECT_GT(recall256, 0.95);
  EXPECT_GT(recall_wide, recall16 + 0.05);
}

}  // namespace
}  // namespace neodb::engine
