// A model per collection, over a real store and index with fake models
// (FakeEmbedder: seed N is model "fake-16-N", loaded from directory "N"):
// two collections on two models in one database, across a restart with yet
// another default model; a reindex of one while both are queried and
// written (no failure, no answer that mixes models); the crash states a
// reindex can leave (staging without and with its commit marker: the first
// resumes, reusing what was staged, or says why it cannot; the second is
// finished); the data directory lock.
#include <unistd.h>

#include <array>
#include <atomic>
#include <filesystem>
#include <fstream>
#include <random>
#include <thread>

#include "absl/strings/str_cat.h"
#include "engine/database.h"
#include "engine/fake_embedder.h"
#include "engine/reindex_staging.h"
#include "common/status_macros.h"
#include "encoder/model.h"
#include "gtest/gtest.h"
#include "tests/engine/engine_test_util.h"

namespace neodb::engine {
namespace {

namespace fs = std::filesystem;
using ::absl::StatusCode;

constexpr int kDim = 16;
const absl::Time kFar = absl::InfiniteFuture();
// Identical texts embed to identical vectors: a query for a stored text
// scores cosine 1 up to float rounding. A query embedded with another model
// than the vectors it meets scores far lower (independent random vectors).
constexpr float kSelfScore = 0.999f;

// Counts the texts it frames (every text the encoder embeds passes here).
class CountingFake : public FakeEmbedder {
 public:
  CountingFake(int dim, int max_tokens, uint64_t seed, std::atomic<int64_t>* framed)
      : FakeEmbedder(dim, max_tokens, seed), framed_(framed) {}
  absl::StatusOr<encoder::FramedTexts> Frame(const std::vector<std::string>& texts,
                                             const encoder::EmbedOptions& options) const override {
    *framed_ += static_cast<int64_t>(texts.size());
    return FakeEmbedder::Frame(texts, options);
  }

 private:
  std::atomic<int64_t>* framed_;
};

std::string Text(const std::string& collection, int i) {
  return absl::StrCat(collection, "w", i % 7, " x", i % 11, " y", i % 13, " z", i);
}

class CollectionModelsTest : public EngineTest {
 protected:
  DatabaseOptions Options(uint64_t default_seed) {
    DatabaseOptions o = BaseOptions();
    o.default_model_dir = std::to_string(default_seed);
    o.embedder_factory = [this](const std::string& d,
                                encoder::Precision) -> absl::StatusOr<std::unique_ptr<Embedder>> {
      ++loads_;
      if (d == "none") return absl::NotFoundError("no checkpoint in none");
      const uint64_t seed = std::stoull(d);
      auto e = std::make_unique<CountingFake>(kDim, 32, seed, &framed_[seed % framed_.size()]);
      e->set_delay(model_delay_);
      return std::unique_ptr<Embedder>(std::move(e));
    };
    return o;
  }
  void Open(uint64_t default_seed) {
    OpenWith(Options(default_seed), std::make_unique<FakeEmbedder>(kDim, 32, default_seed));
  }
  void Create(const std::string& name) {
    db::CollectionSpec spec;
    spec.name = name;
    ASSERT_TRUE(db_->CreateCollection(spec).ok());
  }
  void Fill(const std::string& c, int n) {
    std::vector<DocumentInput> docs;
    for (int i = 0; i < n; ++i) docs.push_back({absl::StrCat("d", i), Text(c, i), {}});
    ASSERT_TRUE(db_->Upsert(c, std::move(docs), kFar).ok());
  }
  // Searches document i's own text: it must come first, scored as itself.
  void ExpectSelfHit(const std::string& c, int i, const std::string& model_id) {
    SearchParams q;
    q.k = 3;
    auto r = db_->NearText(c, Text(c, i), std::nullopt, q, kFar);
    ASSERT_TRUE(r.ok()) << r.status();
    EXPECT_EQ(r->model_id, model_id);
    ASSERT_FALSE(r->hits.empty());
    EXPECT_EQ(r->hits[0].id, absl::StrCat("d", i));
    EXPECT_GT(r->hits[0].score, kSelfScore);
  }
  void ExpectConsistent(const std::string& c, const std::string& model_id) {
    auto v = db_->Verify(c);
    ASSERT_TRUE(v.ok()) << v.status();
    EXPECT_EQ(v->model_id, model_id);
    EXPECT_EQ(v->stored, v->indexed);
    EXPECT_EQ(v->missing_from_index, 0u);
    EXPECT_EQ(v->stale_in_index, 0u);
    EXPECT_EQ(v->foreign_model, 0u);
  }

  std::atomic<int> loads_{0};
  absl::Duration model_delay_ = absl::ZeroDuration();
  // Texts framed by the loaded models, by seed (mod 8).
  std::array<std::atomic<int64_t>, 8> framed_{};
};

// A fake model with the settings a model directory would give it
// (encoder::ModelDefaults: pooling, prompts, neodb_model.json's fusion).
class DirFake : public FakeEmbedder {
 public:
  DirFake(uint64_t seed, encoder::ModelDefaults d) : FakeEmbedder(kDim, 32, seed), d_(std::move(d)) {}
  encoder::ModelDefaults defaults() const override { return d_; }

 private:
  encoder::ModelDefaults d_;
};

encoder::ModelDefaults FusionDefaults(std::string fusion, double alpha) {
  encoder::ModelDefaults d;
  d.hybrid_fusion = std::move(fusion);
  d.hybrid_alpha = alpha;
  return d;
}

// A collection that names no fusion takes its model's; one that names a
// fusion keeps it; a model without one gives adaptive; a model naming an
// unknown fusion fails the creation with a reason, and nothing is created.
TEST_F(CollectionModelsTest, ACollectionTakesItsModelsFusionUnlessItNamesOne) {
  OpenWith(Options(1), std::make_unique<DirFake>(1, FusionDefaults("weighted", 0.6)));
  db::CollectionSpec unnamed;
  unnamed.name = "unnamed";
  unnamed.fusion.clear();  // what a request that names none carries
  auto a = db_->CreateCollection(unnamed);
  ASSERT_TRUE(a.ok()) << a.status();
  EXPECT_EQ(a->spec.fusion, "weighted");
  EXPECT_DOUBLE_EQ(a->spec.fusion_alpha, 0.6);

  db::CollectionSpec named = unnamed;
  named.name = "named";
  named.fusion = "rrf";
  auto b = db_->CreateCollection(named);
  ASSERT_TRUE(b.ok()) << b.status();
  EXPECT_EQ(b->spec.fusion, "rrf");

  // Across a restart the collection keeps what it took.
  Open(2);
  auto again = db_->DescribeCollection("unnamed");
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_EQ(again->spec.fusion, "weighted");
  EXPECT_DOUBLE_EQ(again->spec.fusion_alpha, 0.6);

  // The fake default of seed 2 says nothing: adaptive.
  db::CollectionSpec plain = unnamed;
  plain.name = "plain";
  auto c = db_->CreateCollection(plain);
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->spec.fusion, "adaptive");

  OpenWith(Options(3), std::make_unique<DirFake>(3, FusionDefaults("bogus", 0.5)));
  db::CollectionSpec bad = unnamed;
  bad.name = "bad";
  auto d = db_->CreateCollection(bad);
  ASSERT_EQ(d.status().code(), StatusCode::kFailedPrecondition) << d.status();
  EXPECT_NE(std::string(d.status().message()).find("bogus"), std::string::npos);
  EXPECT_EQ(db_->DescribeCollection("bad").status().code(), StatusCode::kNotFound);
}

// A reindex onto another model moves each setting the collection holds at
// the old model's value to the new model's (pooling, prompts, fusion), keeps
// the ones the user chose, and a reindex back restores the first model's.
TEST_F(CollectionModelsTest, AReindexTakesTheNewModelsSettingsUnlessTheUserChoseThem) {
  const fs::path plain_dir = dir_.string() + "_model_plain";
  const fs::path bge_dir = dir_.string() + "_model_bgelike";
  fs::create_directories(plain_dir);
  fs::create_directories(bge_dir / "1_Pooling");
  auto write = [](const fs::path& p, const std::string& text) { std::ofstream(p) << text; };
  write(bge_dir / "1_Pooling" / "config.json", R"({"pooling_mode_cls_token": true})");
  write(bge_dir / "config_sentence_transformers.json", R"({"prompts": {"query": "q: "}})");
  write(bge_dir / "neodb_model.json", R"({"hybrid": {"fusion": "weighted", "alpha": 0.5}})");
  auto fake_for = [](const std::string& d) -> absl::StatusOr<std::unique_ptr<Embedder>> {
    ASSIGN_OR_RETURN(encoder::ModelDefaults defaults, encoder::LoadModelDefaults(d));
    const uint64_t seed = d.find("bgelike") != std::string::npos ? 2 : 1;
    return std::unique_ptr<Embedder>(std::make_unique<DirFake>(seed, std::move(defaults)));
  };
  DatabaseOptions o = BaseOptions();
  o.default_model_dir = plain_dir.string();
  o.embedder_factory = [&](const std::string& d, encoder::Precision) { return fake_for(d); };
  auto first = fake_for(plain_dir.string());
  ASSERT_TRUE(first.ok()) << first.status();
  OpenWith(o, std::move(*first));

  db::CollectionSpec plain;
  plain.name = "plain";
  plain.fusion.clear();
  ASSERT_TRUE(db_->CreateCollection(plain).ok());
  db::CollectionSpec chosen = plain;
  chosen.name = "chosen";
  chosen.fusion = "rrf";
  ASSERT_TRUE(db_->CreateCollection(chosen).ok());
  for (const char* name : {"plain", "chosen"}) {
    std::vector<DocumentInput> docs(1);
    docs[0].id = "a";
    docs[0].text = "alpha beta";
    ASSERT_TRUE(db_->Upsert(name, std::move(docs), kFar).ok());
    ASSERT_TRUE(db_->Reindex(name, bge_dir.string()).ok());
    db_->WaitForReindex();
  }
  auto p = db_->DescribeCollection("plain");
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_EQ(p->spec.model_dir, bge_dir.string());
  EXPECT_EQ(p->spec.pooling, "cls");
  EXPECT_EQ(p->spec.query_instruction, "q: ");
  EXPECT_EQ(p->spec.fusion, "weighted");
  EXPECT_DOUBLE_EQ(p->spec.fusion_alpha, 0.5);
  auto c = db_->DescribeCollection("chosen");
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->spec.pooling, "cls");
  EXPECT_EQ(c->spec.fusion, "rrf") << "the user's fusion must stay";

  // Back (a rollback): the first model's settings again, and they survive a restart.
  ASSERT_TRUE(db_->Reindex("plain", plain_dir.string()).ok());
  db_->WaitForReindex();
  auto first_again = fake_for(plain_dir.string());
  ASSERT_TRUE(first_again.ok());
  OpenWith(o, std::move(*first_again));
  p = db_->DescribeCollection("plain");
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_EQ(p->spec.pooling, "mean");
  EXPECT_EQ(p->spec.query_instruction, "");
  EXPECT_EQ(p->spec.fusion, "adaptive");
  fs::remove_all(plain_dir);
  fs::remove_all(bge_dir);
}

TEST_F(CollectionModelsTest, TwoCollectionsKeepTheirModelsAcrossARestart) {
  Open(1);
  Create("a");
  Create("b");
  Fill("a", 50);
  Fill("b", 50);
  ASSERT_TRUE(db_->Reindex("b", "2").ok());
  db_->WaitForReindex();
  ASSERT_EQ(db_->GetReindexProgress("b")->state, ReindexProgress::State::kDone)
      << db_->GetReindexProgress("b")->error;
  // b moved, a and the default model did not.
  EXPECT_EQ(db_->DescribeCollection("a")->spec.model_id, "fake-16-1");
  EXPECT_EQ(db_->DescribeCollection("a")->spec.model_dir, "1");
  EXPECT_EQ(db_->DescribeCollection("b")->spec.model_id, "fake-16-2");
  EXPECT_EQ(db_->DescribeCollection("b")->spec.model_dir, "2");
  EXPECT_EQ(db_->Stats().model_id, "fake-16-1");
  // b remembers the model it left (a may be reindexed back onto it whatever
  // the models directory: api/auth/model_paths.h); a has left none.
  EXPECT_EQ(db_->DescribeCollection("b")->spec.previous_model_dir, "1");
  EXPECT_EQ(db_->DescribeCollection("a")->spec.previous_model_dir, "");
  EXPECT_EQ(*db_->OwnModelDirs("b"), (std::vector<std::string>{"1", "2", "1"}));
  EXPECT_EQ(*db_->OwnModelDirs("a"), (std::vector<std::string>{"1", "1"}));
  EXPECT_EQ(db_->OwnModelDirs("none").status().code(), StatusCode::kNotFound);
  for (int i : {0, 17, 49}) {
    ExpectSelfHit("a", i, "fake-16-1");
    ExpectSelfHit("b", i, "fake-16-2");
  }
  // A model that cannot be loaded is the caller's answer, and changes nothing.
  absl::Status bad = db_->Reindex("a", "none");
  EXPECT_EQ(bad.code(), StatusCode::kFailedPrecondition) << bad;
  EXPECT_NE(bad.message().find("no checkpoint in none"), std::string::npos) << bad;
  EXPECT_EQ(db_->GetReindexProgress("a")->state, ReindexProgress::State::kIdle);
  // Restart with a third default model: each collection loads its own.
  Open(3);
  for (int i : {3, 29}) {
    ExpectSelfHit("a", i, "fake-16-1");
    ExpectSelfHit("b", i, "fake-16-2");
  }
  ExpectConsistent("a", "fake-16-1");
  ExpectConsistent("b", "fake-16-2");
  // Writes embed with the collection's model too.
  ASSERT_TRUE(db_->Upsert("a", {{"new", Text("a", 1000), {}}}, kFar).ok());
  SearchParams q;
  auto r = db_->NearText("a", Text("a", 1000), std::nullopt, q, kFar);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->hits[0].id, "new");
  EXPECT_GT(r->hits[0].score, kSelfScore);
  // New collections take the default model.
  Create("c");
  EXPECT_EQ(db_->DescribeCollection("c")->spec.model_id, "fake-16-3");
  EXPECT_EQ(db_->Stats().models_loaded, 3u);
}

TEST_F(CollectionModelsTest, ReindexWhileBothCollectionsAreQueriedAndWritten) {
  Open(1);
  Create("a");
  Create("b");
  const int kDocs = 400;
  Fill("a", kDocs);
  Fill("b", kDocs);
  ExpectSelfHit("b", 1, "fake-16-1");
  model_delay_ = absl::Milliseconds(20);  // the new model is slow: the reindex takes a while
  ASSERT_TRUE(db_->Reindex("b", "2").ok());
  std::atomic<bool> stop{false};
  std::atomic<int> failures{0}, mixed{0}, wrong{0}, answered{0};
  auto query = [&](const std::string& c, uint64_t seed) {
    std::mt19937_64 rng(seed);
    while (!stop) {
      int i = static_cast<int>(rng() % kDocs);
      SearchParams q;
      q.k = 3;
      auto r = db_->NearText(c, Text(c, i), std::nullopt, q, kFar);
      if (!r.ok() || r->hits.empty()) {
        ++failures;
        continue;
      }
      if (r->hits[0].id != absl::StrCat("d", i)) ++wrong;
      if (r->hits[0].score <= kSelfScore) ++mixed;  // query and index of different models
      if (c == "a" && r->model_id != "fake-16-1") ++mixed;
      if (c == "b" && r->model_id != "fake-16-1" && r->model_id != "fake-16-2") ++mixed;
      ++answered;
    }
  };
  std::thread qa(query, "a", 1), qb(query, "b", 2);
  // Writes to b during the reindex are caught up into the new model.
  int written = 0, write_failures = 0;
  do {
    auto w = db_->Upsert("b", {{absl::StrCat("n", written), Text("b", 10000 + written), {}}}, kFar);
    // ABORTED: embedded with the old model while the reindex committed; the
    // documented answer is to retry, which embeds with the new one.
    if (absl::IsAborted(w.status())) continue;
    if (!w.ok()) ++write_failures;
    ++written;
    absl::SleepFor(absl::Milliseconds(5));
  } while (db_->GetReindexProgress("b")->state == ReindexProgress::State::kRunning);
  stop = true;
  qa.join();
  qb.join();
  ASSERT_EQ(db_->GetReindexProgress("b")->state, ReindexProgress::State::kDone)
      << db_->GetReindexProgress("b")->error;
  EXPECT_EQ(failures, 0);
  EXPECT_EQ(write_failures, 0);
  EXPECT_EQ(wrong, 0);
  EXPECT_EQ(mixed, 0);
  EXPECT_GT(answered, 0);
  ExpectSelfHit("b", 2, "fake-16-2");
  ExpectSelfHit("a", 2, "fake-16-1");
  ExpectConsistent("a", "fake-16-1");
  ExpectConsistent("b", "fake-16-2");
  EXPECT_EQ(db_->DescribeCollection("b")->count, static_cast<uint64_t>(kDocs + written));
  for (int j = 0; j < written; ++j) {
    SearchParams q;
    auto r = db_->NearText("b", Text("b", 10000 + j), std::nullopt, q, kFar);
    ASSERT_TRUE(r.ok());
    EXPECT_EQ(r->hits[0].id, absl::StrCat("n", j));
    EXPECT_GT(r->hits[0].score, kSelfScore);
  }
}

// The states a crash inside a reindex leaves, made directly in the store.
class ReindexCrashStateTest : public CollectionModelsTest {
 protected:
  // Closes the database and stages collection `c` on model `seed` in the
  // store, as a reindex would have when it was killed.
  void StageReindex(const std::string& c, uint64_t seed, bool committed, int staged_docs) {
    auto before = db_->DescribeCollection(c);
    ASSERT_TRUE(before.ok());
    db_.reset();
    auto store = db::Store::Open((dir_ / "store").string());
    ASSERT_TRUE(store.ok()) << store.status();
    db::CollectionSpec spec = before->spec;
    spec.name = StagingName(c);
    spec.model_id = absl::StrCat("fake-16-", seed);
    spec.model_dir = std::to_string(seed);
    spec.created_at_micros = 0;
    ASSERT_TRUE((*store)->CreateCollection(spec).ok());
    FakeEmbedder model(kDim, 32, seed);
    std::vector<db::Document> docs;
    for (int i = 0; i < staged_docs; ++i) {
      db::Document d;
      d.id = absl::StrCat("d", i);
      d.text = Text(c, i);
      d.vector = (*model.Embed({d.text}, {}))[0].vector;
      d.model_id = spec.model_id;
      docs.push_back(std::move(d));
    }
    ASSERT_TRUE((*store)->Upsert(spec.name, std::move(docs)).ok());
    if (committed) {
      db::CollectionUpdate u;
      u.engine_state = std::string(kCommitMarker);
      ASSERT_TRUE((*store)->UpdateCollection(spec.name, u).ok());
      // Killed halfway through the roll-forward: some documents moved.
      ASSERT_TRUE(RollForwardSome(**store, spec.name, c, staged_docs / 2));
    }
  }
  // Moves the first n staged documents, as RollForward's first chunks would.
  static bool RollForwardSome(db::Store& store, const std::string& staging, const std::string& c,
                              int n) {
    auto page = store.List(staging, "", static_cast<size_t>(n));
    if (!page.ok()) return false;
    std::vector<std::string> ids;
    for (const auto& d : page->documents) ids.push_back(d.id);
    return store.Upsert(c, std::move(page->documents)).ok() && store.Delete(staging, ids).ok();
  }
};

TEST_F(ReindexCrashStateTest, UncommittedReindexResumesReusingWhatWasStaged) {
  Open(1);
  Create("a");
  Fill("a", 200);
  // Changed and deleted after the killed reindex staged them.
  std::vector<DocumentInput> changed;
  changed.push_back({"d5", "changed five", {}});
  ASSERT_TRUE(db_->Upsert("a", std::move(changed), kFar).ok());
  ASSERT_TRUE(db_->Delete("a", {"d7"}).ok());
  StageReindex("a", 2, /*committed=*/false, 150);  // d0..d149, as they were
  Open(1);
  // The reindex runs again at startup, not IDLE.
  const ReindexProgress started = *db_->GetReindexProgress("a");
  EXPECT_NE(started.state, ReindexProgress::State::kIdle);
  EXPECT_NE(started.state, ReindexProgress::State::kFailed) << started.error;
  db_->WaitForReindex();
  const ReindexProgress p = *db_->GetReindexProgress("a");
  ASSERT_EQ(p.state, ReindexProgress::State::kDone) << p.error;
  EXPECT_EQ(p.model_id, "fake-16-2");
  // Embedded: the 50 never staged and d5, whose staged text is stale; the
  // other 148 staged vectors were kept.
  EXPECT_EQ(framed_[2].load(), 51);
  ExpectConsistent("a", "fake-16-2");
  EXPECT_EQ(db_->DescribeCollection("a")->count, 199u);
  auto got = db_->Get("a", {"d5", "d7"});
  ASSERT_TRUE(got.ok());
  ASSERT_TRUE((*got)[0].has_value());
  EXPECT_EQ((*got)[0]->text, "changed five");
  EXPECT_FALSE((*got)[1].has_value()) << "the staged copy of a deleted document came back";
  for (int i : {0, 100, 149, 150, 199}) ExpectSelfHit("a", i, "fake-16-2");
  SearchParams q;
  q.k = 1;
  auto r = db_->NearText("a", "changed five", std::nullopt, q, kFar);
  ASSERT_TRUE(r.ok());
  ASSERT_EQ(r->hits.size(), 1u);
  EXPECT_EQ(r->hits[0].id, "d5");
  EXPECT_GT(r->hits[0].score, kSelfScore);
  EXPECT_EQ(db_->ListCollections()->size(), 1u);
}

TEST_F(CollectionModelsTest, AReindexStoppedByAShutdownResumesAtTheNextOpen) {
  Open(1);
  Create("a");
  Fill("a", 640);                         // ten batches
  model_delay_ = absl::Milliseconds(20);  // each batch of the new model
  ASSERT_TRUE(db_->Reindex("a", "2").ok());
  while (db_->GetReindexProgress("a")->done == 0) absl::SleepFor(absl::Milliseconds(1));
  db_.reset();  // a clean shutdown, mid-way unless this thread stalled
  model_delay_ = absl::ZeroDuration();
  Open(1);
  const ReindexProgress p = *db_->GetReindexProgress("a");
  if (p.state == ReindexProgress::State::kIdle) {
    // The reindex had finished before the shutdown: nothing to resume.
    ExpectConsistent("a", "fake-16-2");
  } else {
    EXPECT_EQ(p.model_id, "fake-16-2");
    db_->WaitForReindex();
    ASSERT_EQ(db_->GetReindexProgress("a")->state, ReindexProgress::State::kDone)
        << db_->GetReindexProgress("a")->error;
    // What the stopped run staged was kept.
    EXPECT_LT(framed_[2].load(), 2 * 640);
  }
  ExpectConsistent("a", "fake-16-2");
  EXPECT_EQ(db_->DescribeCollection("a")->count, 640u);
  for (int i : {0, 320, 639}) ExpectSelfHit("a", i, "fake-16-2");
}

TEST_F(ReindexCrashStateTest, AnInterruptedReindexThatCannotResumeSaysWhy) {
  Open(1);
  Create("a");
  Fill("a", 100);
  StageReindex("a", 2, /*committed=*/false, 60);
  {
    // Its target model is gone since.
    auto store = db::Store::Open((dir_ / "store").string());
    ASSERT_TRUE(store.ok());
    db::CollectionUpdate u;
    u.model_dir = "none";
    ASSERT_TRUE((*store)->UpdateCollection(StagingName("a"), u).ok());
  }
  Open(1);
  const ReindexProgress p = *db_->GetReindexProgress("a");
  EXPECT_EQ(p.state, ReindexProgress::State::kFailed);
  EXPECT_NE(p.error.find("cannot resume"), std::string::npos) << p.error;
  EXPECT_NE(p.error.find("none"), std::string::npos) << p.error;
  // The collection serves on its model; nothing of the staging is left.
  ExpectConsistent("a", "fake-16-1");
  EXPECT_EQ(db_->DescribeCollection("a")->count, 100u);
  ExpectSelfHit("a", 7, "fake-16-1");
  EXPECT_EQ(db_->ListCollections()->size(), 1u);
  db_.reset();
  auto store = db::Store::Open((dir_ / "store").string());
  ASSERT_TRUE(store.ok());
  EXPECT_TRUE(absl::IsNotFound((*store)->GetCollection(StagingName("a")).status()));
}

TEST_F(ReindexCrashStateTest, CommittedReindexIsFinishedAtStartup) {
  Open(1);
  Create("a");
  Fill("a", 100);
  StageReindex("a", 2, /*committed=*/true, 100);
  Open(1);
  ExpectConsistent("a", "fake-16-2");
  EXPECT_EQ(db_->DescribeCollection("a")->count, 100u);
  EXPECT_EQ(db_->DescribeCollection("a")->spec.model_dir, "2");
  EXPECT_EQ(db_->DescribeCollection("a")->spec.previous_model_dir, "1");
  for (int i : {0, 42, 99}) ExpectSelfHit("a", i, "fake-16-2");
  EXPECT_EQ(db_->ListCollections()->size(), 1u);
}

TEST_F(CollectionModelsTest, ALockedDataDirectoryNamesItsHolder) {
  Open(1);
  auto second = Database::Open(Options(1), std::make_unique<FakeEmbedder>(kDim, 32, 1));
  ASSERT_FALSE(second.ok());
  EXPECT_EQ(second.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(second.status().message().find(dir_.string()), std::string::npos) << second.status();
  EXPECT_NE(second.status().message().find(absl::StrCat("(pid ", getpid(), ")")), std::string::npos)
      << second.status();
  // The holder is unharmed, and the directory opens once it is released.
  Create("still");
  db_.reset();
  Open(1);
  EXPECT_TRUE(db_->DescribeCollection("still").ok());
}

TEST_F(CollectionModelsTest, ACollectionWhoseCheckpointChangedRefusesToEmbed) {
  Open(1);
  Create("a");
  Fill("a", 5);
  db_.reset();
  // Directory "1" now holds another model (seed 7): the content hash differs.
  DatabaseOptions o = Options(9);
  o.embedder_factory = [](const std::string&,
                          encoder::Precision) -> absl::StatusOr<std::unique_ptr<Embedder>> {
    return std::unique_ptr<Embedder>(new FakeEmbedder(kDim, 32, 7));
  };
  auto db = Database::Open(o, std::make_unique<FakeEmbedder>(kDim, 32, 9));
  ASSERT_TRUE(db.ok()) << db.status();
  SearchParams q;
  auto r = (*db)->NearText("a", Text("a", 1), std::nullopt, q, kFar);
  EXPECT_EQ(r.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(r.status().message().find("fake-16-1"), std::string::npos) << r.status();
  EXPECT_NE(r.status().message().find("reindex"), std::string::npos) << r.status();
}

}  // namespace
}  // namespace neodb::engine
