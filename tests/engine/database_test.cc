// Database over a real Store and index with a deterministic fake Embedder:
// visibility after upsert, overwrite/delete never stale, filters against brute
// force, validation, restart from snapshot + change-log replay, rebuild
// without a snapshot, model mismatch, reindex with a new model.
#include "engine/database.h"
#include "tests/engine/engine_test_util.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <random>
#include <thread>

#include "absl/strings/str_cat.h"
#include "engine/fake_embedder.h"
#include "gtest/gtest.h"

namespace neodb::engine {
namespace {

namespace fs = std::filesystem;
using ::absl::StatusCode;

constexpr int kDim = 16;
const absl::Time kFar = absl::InfiniteFuture();

class DatabaseTest : public EngineTest {
 protected:
  DatabaseOptions Options(bool snapshot_on_close = true) {
    DatabaseOptions o = BaseOptions();
    o.snapshot_on_close = snapshot_on_close;
    o.embedder_factory = [](const std::string& d, encoder::Precision) -> absl::StatusOr<std::unique_ptr<Embedder>> {
      return std::unique_ptr<Embedder>(new FakeEmbedder(kDim, 32, std::stoull(d)));
    };
    return o;
  }
  void Open(uint64_t seed = 1, bool snapshot_on_close = true) {
    OpenWith(Options(snapshot_on_close), std::make_unique<FakeEmbedder>(kDim, 32, seed));
  }
  void Create(const std::string& name, const std::string& index = "Flat") {
    db::CollectionSpec spec;
    spec.name = name;
    spec.index_spec = index;
    auto info = db_->CreateCollection(spec);
    ASSERT_TRUE(info.ok()) << info.status();
  }
  void Put(const std::string& c, const std::string& id, const std::string& text,
           db::Metadata m = {}) {
    auto r = db_->Upsert(c, {{id, text, std::move(m)}}, kFar);
    ASSERT_TRUE(r.ok()) << r.status();
  }
  std::vector<std::string> Search(const std::string& c, const std::string& q, int k,
                                  const db::Filter* f = nullptr) {
    SearchParams sq;
    sq.k = k;
    // These tests check the vector path against brute force over the fake's
    // vectors; hybrid and keyword modes are keyword_search_test.cc's.
    sq.mode = SearchMode::kVector;
    if (f) sq.filter = *f;
    sq.include_text = true;
    auto r = db_->NearText(c, q, std::nullopt, sq, kFar);
    EXPECT_TRUE(r.ok()) << r.status();
    std::vector<std::string> ids;
    if (r.ok())
      for (auto& h : r->hits) ids.push_back(h.id);
    return ids;
  }
  void ExpectConsistent(const std::string& c) {
    auto v = db_->Verify(c);
    ASSERT_TRUE(v.ok()) << v.status();
    EXPECT_EQ(v->stored, v->indexed);
    EXPECT_EQ(v->missing_from_index, 0u);
    EXPECT_EQ(v->stale_in_index, 0u);
    EXPECT_EQ(v->foreign_model, 0u);
  }

};

std::string Words(int i) { return absl::StrCat("w", i % 7, " x", i % 11, " y", i % 13, " z", i); }

TEST_F(DatabaseTest, UpsertIsSearchableOnReturn) {
  Open();
  Create("c");
  for (int i = 0; i < 40; ++i) {
    Put("c", absl::StrCat("d", i), Words(i));
    // The document just acknowledged is found by its own text.
    auto ids = Search("c", Words(i), 1);
    ASSERT_EQ(ids.size(), 1u);
    EXPECT_EQ(ids[0], absl::StrCat("d", i));
  }
  ExpectConsistent("c");
  auto info = db_->DescribeCollection("c");
  ASSERT_TRUE(info.ok());
  EXPECT_EQ(info->count, 40u);
  EXPECT_EQ(info->index_size, 40u);
  EXPECT_EQ(info->spec.dimension, static_cast<uint32_t>(kDim));
  EXPECT_EQ(info->spec.model_id, "fake-16-1");
}

TEST_F(DatabaseTest, GeneratedIdsAreReturned) {
  Open();
  Create("c");
  auto r = db_->Upsert("c", {{"", "alpha beta", {}}, {"", "gamma", {}}}, kFar);
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_EQ(r->size(), 2u);
  EXPECT_NE((*r)[0], (*r)[1]);
  auto got = db_->Get("c", *r);
  ASSERT_TRUE(got.ok());
  ASSERT_TRUE((*got)[1].has_value());
  EXPECT_EQ((*got)[1]->text, "gamma");
}

TEST_F(DatabaseTest, OverwriteAndDeleteNeverReturnStaleOrDeleted) {
  Open();
  Create("c", "HNSW16");
  for (int i = 0; i < 60; ++i) Put("c", absl::StrCat("d", i), Words(i));
  // Overwrite d1 with new text: searching the old text must never return d1
  // carrying the old text; searching the new text finds it.
  Put("c", "d1", "completely different words here");
  SearchParams q;
  q.k = 60;
  q.include_text = true;
  auto r = db_->NearText("c", Words(1), std::nullopt, q, kFar);
  ASSERT_TRUE(r.ok()) << r.status();
  for (const auto& h : r->hits) {
    if (h.id == "d1") {
      EXPECT_EQ(h.text, "completely different words here");
    }
  }
  EXPECT_EQ(Search("c", "completely different words here", 1)[0], "d1");
  // Delete: never returned again.
  auto n = db_->Delete("c", {"d2", "d3", "missing"});
  ASSERT_TRUE(n.ok());
  EXPECT_EQ(*n, 2u);
  for (int i = 0; i < 60; ++i) {
    for (const auto& id : Search("c", Words(i), 10)) {
      EXPECT_NE(id, "d2");
      EXPECT_NE(id, "d3");
    }
  }
  EXPECT_EQ(r->hits.size(), 60u);
  ExpectConsistent("c");
}

TEST_F(DatabaseTest, FilteredSearchMatchesBruteForce) {
  Open();
  Create("c");
  std::vector<std::string> texts;
  for (int i = 0; i < 200; ++i) {
    db::Metadata m{{"year", int64_t{2000 + i % 25}}, {"tag", std::string(i % 3 ? "a" : "b")}};
    texts.push_back(Words(i * 7 + 3));
    Put("c", absl::StrCat("d", i), texts.back(), m);
  }
  db::Filter f = db::Filter::And(
      {db::Filter::Ge("year", int64_t{2010}), db::Filter::Eq("tag", std::string("b"))});
  // Brute force over the fake's vectors (cosine).
  FakeEmbedder fake(kDim, 32, 1);
  auto qv = (*fake.Embed({"w3 x5 y2"}, {}))[0].vector;
  auto cosine = [](const std::vector<float>& a, const std::vector<float>& b) {
    double d = 0, na = 0, nb = 0;
    for (size_t i = 0; i < a.size(); ++i) d += a[i] * b[i], na += a[i] * a[i], nb += b[i] * b[i];
    return d / std::sqrt(na * nb);
  };
  std::vector<std::pair<double, std::string>> scored;
  for (int i = 0; i < 200; ++i) {
    if (2000 + i % 25 >= 2010 && i % 3 == 0) {
      scored.push_back(
          {-cosine(qv, (*fake.Embed({texts[i]}, {}))[0].vector), absl::StrCat("d", i)});
    }
  }
  std::sort(scored.begin(), scored.end());
  const int k = 10;
  auto ids = Search("c", "w3 x5 y2", k, &f);
  ASSERT_EQ(ids.size(), static_cast<size_t>(k));  // k results whenever k match
  for (int i = 0; i < k; ++i) EXPECT_EQ(ids[i], scored[i].second) << i;
  // A filter matching fewer than k returns exactly those.
  db::Filter few = db::Filter::Eq("year", int64_t{2024});
  auto some = Search("c", "w3", 50, &few);
  EXPECT_EQ(some.size(), 8u);  // i % 25 == 24 for i < 200
}

TEST_F(DatabaseTest, ValidationErrorsArePrecise) {
  Open();
  Create("c");
  auto bad = [&](std::vector<DocumentInput> docs) {
    return db_->Upsert("c", std::move(docs), kFar).status();
  };
  EXPECT_EQ(bad({{"a", "", {}}}).code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(bad({{"a", "", {}}}).message(), "document 'a': text is empty");
  EXPECT_EQ(bad({{"a", "bad \xff utf8", {}}}).code(), StatusCode::kInvalidArgument);
  std::string long_text;
  for (int i = 0; i < 40; ++i) long_text += "word ";
  absl::Status too_long = bad({{"a", long_text, {}}});
  EXPECT_EQ(too_long.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(too_long.message().find("42 tokens"), std::string::npos) << too_long;
  EXPECT_EQ(db_->Upsert("nope", {{"a", "x", {}}}, kFar).status().code(), StatusCode::kNotFound);
  SearchParams q;
  EXPECT_EQ(db_->NearVector("c", std::vector<float>(kDim + 1, 1.f), q).status().code(),
            StatusCode::kInvalidArgument);
  q.k = 0;
  EXPECT_EQ(db_->NearVector("c", std::vector<float>(kDim, 1.f), q).status().code(),
            StatusCode::kInvalidArgument);
  db::CollectionSpec spec;
  spec.name = "bad name!";
  EXPECT_EQ(db_->CreateCollection(spec).status().code(), StatusCode::kInvalidArgument);
  spec.name = "c";
  EXPECT_EQ(db_->CreateCollection(spec).status().code(), StatusCode::kAlreadyExists);
  spec.name = "d";
  spec.index_spec = "HNSW0";
  EXPECT_EQ(db_->CreateCollection(spec).status().code(), StatusCode::kInvalidArgument);
  // Nothing was written by the failures.
  EXPECT_EQ(db_->DescribeCollection("c")->count, 0u);
}

TEST_F(DatabaseTest, OverflowChunkCollectionAcceptsLongText) {
  Open();
  db::CollectionSpec spec;
  spec.name = "long";
  spec.overflow = "chunk";
  ASSERT_TRUE(db_->CreateCollection(spec).ok());
  std::string long_text;
  for (int i = 0; i < 100; ++i) long_text += absl::StrCat("word", i, " ");
  EXPECT_TRUE(db_->Upsert("long", {{"a", long_text, {}}}, kFar).ok());
}

TEST_F(DatabaseTest, CleanRestartLoadsSnapshotWithoutRebuild) {
  Open();
  Create("c", "HNSW16");
  for (int i = 0; i < 50; ++i) Put("c", absl::StrCat("d", i), Words(i));
  Open();  // clean close (snapshot) and reopen
  DatabaseStats s = db_->Stats();
  EXPECT_EQ(s.snapshot_loads, 1u);
  EXPECT_EQ(s.index_rebuilds, 0u);
  EXPECT_EQ(s.replayed_changes, 0u);
  EXPECT_EQ(Search("c", Words(17), 1)[0], "d17");
  auto info = db_->DescribeCollection("c");
  EXPECT_EQ(info->index_spec, "HNSW16");
  ExpectConsistent("c");
}

TEST_F(DatabaseTest, CrashAfterSnapshotReplaysChangeLog) {
  Open(1, /*snapshot_on_close=*/false);
  Create("c");
  for (int i = 0; i < 30; ++i) Put("c", absl::StrCat("d", i), Words(i));
  ASSERT_TRUE(db_->Snapshot().ok());
  for (int i = 30; i < 45; ++i) Put("c", absl::StrCat("d", i), Words(i));
  Put("c", "d5", "overwritten after the snapshot");
  ASSERT_TRUE(db_->Delete("c", {"d6", "d31"}).ok());
  Open(1, /*snapshot_on_close=*/false);  // "crash": no snapshot at close
  DatabaseStats s = db_->Stats();
  EXPECT_EQ(s.snapshot_loads, 1u);
  EXPECT_EQ(s.index_rebuilds, 0u);
  EXPECT_EQ(s.replayed_changes, 18u);  // 15 inserts, 1 overwrite, 2 deletes
  EXPECT_EQ(db_->DescribeCollection("c")->count, 43u);
  EXPECT_EQ(Search("c", Words(40), 1)[0], "d40");
  EXPECT_EQ(Search("c", "overwritten after the snapshot", 1)[0], "d5");
  ExpectConsistent("c");
  // A second restart changes nothing.
  auto before = db_->Verify("c");
  Open();
  auto after = db_->Verify("c");
  EXPECT_EQ(before->stored, after->stored);
  ExpectConsistent("c");
}

TEST_F(DatabaseTest, MissingSnapshotRebuildsFromStore) {
  Open(1, /*snapshot_on_close=*/false);
  Create("c");
  for (int i = 0; i < 25; ++i) Put("c", absl::StrCat("d", i), Words(i));
  db_.reset();
  fs::remove_all(dir_ / "snapshots");
  Open();
  EXPECT_EQ(db_->Stats().index_rebuilds, 1u);
  EXPECT_EQ(db_->Stats().snapshot_loads, 0u);
  EXPECT_EQ(Search("c", Words(3), 1)[0], "d3");
  ExpectConsistent("c");
}

TEST_F(DatabaseTest, CorruptSnapshotRebuildsFromStore) {
  Open();
  Create("c");
  for (int i = 0; i < 25; ++i) Put("c", absl::StrCat("d", i), Words(i));
  db_.reset();
  for (auto& e : fs::recursive_directory_iterator(dir_ / "snapshots")) {
    if (e.is_regular_file()) fs::resize_file(e.path(), fs::file_size(e.path()) / 2);
  }
  Open();
  EXPECT_EQ(db_->Stats().index_rebuilds, 1u);
  ExpectConsistent("c");
}

TEST_F(DatabaseTest, DifferentServingModelRefusesNearText) {
  Open(1);
  Create("c");
  Put("c", "a", "hello world");
  Open(2);  // another model
  SearchParams q;
  auto r = db_->NearText("c", "hello", std::nullopt, q, kFar);
  EXPECT_EQ(r.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(r.status().message().find("reindex"), std::string::npos) << r.status();
  EXPECT_EQ(db_->Upsert("c", {{"b", "x", {}}}, kFar).status().code(),
            StatusCode::kFailedPrecondition);
  // Near-vector needs no model.
  EXPECT_TRUE(db_->NearVector("c", std::vector<float>(kDim, 0.5f), q).ok());
}

TEST_F(DatabaseTest, ReindexWithNewModelSwapsEverything) {
  Open(1);
  Create("c");
  for (int i = 0; i < 100; ++i) Put("c", absl::StrCat("d", i), Words(i));
  ASSERT_TRUE(db_->Reindex("c", "2").ok());
  // Searches keep succeeding meanwhile (on either side of the swap).
  for (int i = 0; i < 20; ++i) {
    SearchParams q;
    auto r = db_->NearText("c", Words(i), std::nullopt, q, kFar);
    EXPECT_TRUE(r.ok() || r.status().code() == StatusCode::kFailedPrecondition) << r.status();
  }
  db_->WaitForReindex();
  auto p = db_->GetReindexProgress("c");
  ASSERT_TRUE(p.ok());
  EXPECT_EQ(p->state, ReindexProgress::State::kDone) << p->error;
  EXPECT_EQ(p->done, 100u);
  EXPECT_EQ(db_->DescribeCollection("c")->spec.model_id, "fake-16-2");
  // The collection moved; the server's default model did not (issue 13).
  EXPECT_EQ(db_->Stats().model_id, "fake-16-1");
  ExpectConsistent("c");  // no vector of the old model left
  EXPECT_EQ(Search("c", Words(42), 1)[0], "d42");
  // Restart on the new model serves it.
  Open(2);
  EXPECT_EQ(Search("c", Words(43), 1)[0], "d43");
  ExpectConsistent("c");
}

TEST_F(DatabaseTest, HnswTombstonesTriggerBackgroundRebuild) {
  Open();
  Create("h", "HNSW16");
  for (int i = 0; i < 100; ++i) Put("h", absl::StrCat("d", i), Words(i));
  // The count before the overwrites: the rebuild they trigger may well run
  // while they are still being written.
  const uint64_t before = db_->Stats().index_rebuilds;
  for (int i = 0; i < 60; ++i) Put("h", absl::StrCat("d", i), Words(i + 1000));
  // The maintenance thread checks every 0.5 s. No deadline of our own: how
  // soon it runs depends on the machine's load; ctest's timeout bounds a hang.
  while (db_->Stats().index_rebuilds == before) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  EXPECT_GT(db_->Stats().index_rebuilds, before);
  ExpectConsistent("h");
  EXPECT_EQ(Search("h", Words(1005), 1)[0], "d5");
}

TEST_F(DatabaseTest, DropRemovesEverything) {
  Open();
  Create("c");
  Put("c", "a", "hello");
  ASSERT_TRUE(db_->DropCollection("c").ok());
  EXPECT_EQ(db_->DescribeCollection("c").status().code(), StatusCode::kNotFound);
  Create("c");
  EXPECT_EQ(db_->DescribeCollection("c")->count, 0u);
  Open();
  EXPECT_EQ(db_->DescribeCollection("c")->count, 0u);
  ExpectConsistent("c");
}

}  // namespace
}  // namespace neodb::engine
