// Verify's vector checks (engine/vector_verify.h): a clean collection of each
// index kind passes; a stored vector that is not its text's (planted through
// the API, as a re-import of a wrong export would store it) and an index entry
// that is not its stored vector (planted in a valid snapshot, as a bug in the
// index path would leave it) are each caught and named; IVF-PQ's entries,
// which cannot be given back, are reported unchecked, not passed.
#include <filesystem>

#include "absl/strings/str_cat.h"
#include "engine/database.h"
#include "engine/fake_embedder.h"
#include "gtest/gtest.h"
#include "index/snapshot.h"
#include "tests/engine/engine_test_util.h"

namespace neodb::engine {
namespace {

constexpr int kDim = 16;
const absl::Time kFar = absl::InfiniteFuture();

std::string Words(int i) { return absl::StrCat("w", i % 7, " x", i % 11, " y", i % 13, " z", i); }

class VerifyVectorsTest : public EngineTest {
 protected:
  void Open() {
    DatabaseOptions o = BaseOptions();
    o.snapshot_on_close = true;
    OpenWith(o, std::make_unique<FakeEmbedder>(kDim, 32, 1));
  }
  void Create(const std::string& name, const std::string& index) {
    db::CollectionSpec spec;
    spec.name = name;
    spec.index_spec = index;
    auto info = db_->CreateCollection(spec);
    ASSERT_TRUE(info.ok()) << info.status();
  }
  void Fill(const std::string& c, int n) {
    std::vector<DocumentInput> docs;
    for (int i = 0; i < n; ++i) docs.push_back({absl::StrCat("d", i), Words(i), {}});
    auto r = db_->Upsert(c, std::move(docs), kFar);
    ASSERT_TRUE(r.ok()) << r.status();
  }
  VerifyReport Verify(const std::string& c, VectorVerifyOptions o = {}) {
    auto v = db_->Verify(c, o);
    EXPECT_TRUE(v.ok()) << v.status();
    return v.ok() ? *v : VerifyReport{};
  }
};

class VerifyEachKind : public VerifyVectorsTest,
                       public ::testing::WithParamInterface<const char*> {};

TEST_P(VerifyEachKind, CleanCollectionPasses) {
  Open();
  Create("c", GetParam());
  Fill("c", 40);
  for (bool full : {false, true}) {
    VerifyReport v = Verify("c", {.full = full});
    EXPECT_EQ(v.stored, 40u);
    EXPECT_EQ(v.vectors.index_compared, 40u);
    EXPECT_EQ(v.vectors.index_mismatches, 0u);
    EXPECT_EQ(v.vectors.index_unchecked, 0u);
    EXPECT_EQ(v.vectors.reembed_checked, 40u);  // the sample (64) covers all 40
    EXPECT_EQ(v.vectors.reembed_mismatches, 0u);
    EXPECT_GE(v.vectors.reembed_lowest_cosine, v.vectors.reembed_min_cosine);
    EXPECT_EQ(v.vectors.reembed_skipped_reason, "");
  }
}

INSTANTIATE_TEST_SUITE_P(Kinds, VerifyEachKind, ::testing::Values("Flat", "HNSW16", "IVF4,PQ4"));

TEST_F(VerifyVectorsTest, CorruptedStoredVectorIsCaught) {
  Open();
  Create("c", "HNSW16");
  Fill("c", 30);
  // Another text's vector, stored as this model's for d7's text.
  std::vector<float> wrong(kDim, 0.0f);
  wrong[3] = 1.0f;
  DocumentInput bad{"d7", Words(7), {}};
  bad.vector = wrong;
  bad.vector_model_id = "fake-16-1";
  ASSERT_TRUE(db_->Upsert("c", {bad}, kFar).ok());
  VerifyReport v = Verify("c");
  // The index holds what the store holds: only the texts' check sees it.
  EXPECT_EQ(v.vectors.index_mismatches, 0u);
  EXPECT_EQ(v.vectors.reembed_checked, 30u);
  EXPECT_EQ(v.vectors.reembed_mismatches, 1u);
  EXPECT_EQ(v.vectors.reembed_mismatch_ids, std::vector<std::string>{"d7"});
  EXPECT_LT(v.vectors.reembed_lowest_cosine, 0.9);
}

TEST_F(VerifyVectorsTest, StaleIndexEntryIsCaught) {
  Open();
  Create("c", "Flat");
  Fill("c", 30);
  auto got = db_->Get("c", {"d12"});
  ASSERT_TRUE(got.ok() && (*got)[0].has_value());
  const int64_t internal = static_cast<int64_t>((*got)[0]->internal_id);
  db_.reset();  // snapshots on close
  // A valid snapshot (checksummed, same position and model) whose entry for
  // d12 is another vector.
  const std::string dir = (dir_ / "snapshots" / "c").string();
  auto snap = index::ReadLatestSnapshot(dir);
  ASSERT_TRUE(snap.ok()) << snap.status();
  ASSERT_TRUE(snap->index->Remove(std::vector<int64_t>{internal}).ok());
  std::vector<float> other(kDim, 0.0f);
  other[0] = 1.0f;
  ASSERT_TRUE(snap->index->Add(std::vector<int64_t>{internal}, other).ok());
  ASSERT_TRUE(index::WriteSnapshot(dir, *snap->index, snap->manifest.covered_seq,
                                   snap->manifest.model_id, 1)
                  .ok());
  Open();
  EXPECT_EQ(db_->Stats().snapshot_loads, 1u);  // the planted snapshot was taken
  VerifyReport v = Verify("c");
  EXPECT_EQ(v.missing_from_index, 0u);  // the ids alone look right
  EXPECT_EQ(v.stale_in_index, 0u);
  EXPECT_EQ(v.vectors.index_compared, 30u);
  EXPECT_EQ(v.vectors.index_mismatches, 1u);
  EXPECT_EQ(v.vectors.index_mismatch_ids, std::vector<std::string>{"d12"});
  EXPECT_EQ(v.vectors.reembed_mismatches, 0u);  // the stored vector is right
}

TEST_F(VerifyVectorsTest, TrainedIvfPqIsReportedUnchecked) {
  Open();
  Create("c", "IVF4,PQ4");
  Fill("c", 300);  // past the training threshold (256)
  VerifyReport v = Verify("c");
  EXPECT_EQ(v.vectors.index_compared, 0u);
  EXPECT_EQ(v.vectors.index_unchecked, 300u);
  EXPECT_NE(v.vectors.index_unchecked_reason.find("product codes"), std::string::npos);
}

TEST_F(VerifyVectorsTest, SampleIsSmallAndDeterministicFullIsAll) {
  Open();
  Create("c", "Flat");
  Fill("c", 300);
  VerifyReport a = Verify("c", {.sample = 10});
  EXPECT_EQ(a.vectors.reembed_checked, 10u);
  EXPECT_EQ(Verify("c").vectors.reembed_checked, kVerifySampleSize);
  EXPECT_EQ(Verify("c", {.full = true}).vectors.reembed_checked, 300u);
  // The same ten each time: plant a bad vector into one of them and see it.
  VerifySample s(10);
  std::vector<std::string> ids;
  for (int i = 0; i < 300; ++i) s.Offer(db::Document{.id = absl::StrCat("d", i)});
  for (const auto& d : s.Take()) ids.push_back(d.id);
  DocumentInput bad{ids[0], Words(std::stoi(ids[0].substr(1))), {}};
  std::vector<float> wrong(kDim, 0.0f);
  wrong[5] = 1.0f;
  bad.vector = wrong;
  bad.vector_model_id = "fake-16-1";
  ASSERT_TRUE(db_->Upsert("c", {bad}, kFar).ok());
  VerifyReport b = Verify("c", {.sample = 10});
  EXPECT_EQ(b.vectors.reembed_mismatch_ids, std::vector<std::string>{ids[0]});
}

TEST_F(VerifyVectorsTest, ClientVectorsAreNotReembedded) {
  Open();
  db::CollectionSpec spec;
  spec.name = "e";
  spec.index_spec = "Flat";
  VectorOptions vo;
  vo.source = VectorSource::kExternal;
  vo.dimension = 4;
  vo.name = "mine";
  auto info = db_->CreateCollection(spec, vo);
  ASSERT_TRUE(info.ok()) << info.status();
  DocumentInput d{"a", "", {}};
  d.vector = std::vector<float>{1, 2, 3, 4};
  ASSERT_TRUE(db_->Upsert("e", {d}, kFar).ok());
  VerifyReport v = Verify("e");
  EXPECT_EQ(v.vectors.index_compared, 1u);
  EXPECT_EQ(v.vectors.index_mismatches, 0u);
  EXPECT_EQ(v.vectors.reembed_checked, 0u);
  EXPECT_NE(v.vectors.reembed_skipped_reason, "");
}

}  // namespace
}  // namespace neodb::engine
