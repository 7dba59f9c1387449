// Documents chosen by a filter or by ids, through engine::Database: Count,
// DeleteWhere and UpdateMetadata over random documents and random filters,
// each answer checked against a model of the collection kept by the test
// (the live documents and their metadata, patched by the test's own merge
// below, written from metadata_patch.h's contract without its code). The
// filter's verdict on one document is db::Filter::Matches, which
// filter_property_test proves against a brute-force evaluator; what this
// test proves is the selection: every live document the filter accepts,
// and only those, counted, deleted or updated whole, with texts and vectors
// untouched, the indexes equal to the store (Verify) and the same content
// after a restart replays the log. Seeds are fixed.
#include <algorithm>
#include <map>
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
constexpr int kDocs = 700;  // more than two selection batches (kSelectionBatch)

struct Doc {
  std::string text;
  std::vector<float> vector;
  db::Metadata metadata;
};

class Gen {
 public:
  explicit Gen(uint64_t seed) : rng_(seed) {}
  int Next(int n) { return static_cast<int>(rng_() % static_cast<uint64_t>(n)); }
  bool Chance(int percent) { return Next(100) < percent; }
  db::Metadata Metadata() {
    db::Metadata m;
    m["year"] = static_cast<int64_t>(2015 + Next(10));
    if (Chance(80)) m["g"] = std::string(1, "abcd"[Next(4)]);
    if (Chance(70)) {
      db::Object o;
      o.fields["k"] = static_cast<int64_t>(Next(4));
      if (Chance(50)) o.fields["s"] = std::string(1, "xy"[Next(2)]);
      m["n"] = o;
    }
    if (Chance(60)) {
      db::Array a;
      for (int i = Next(3); i >= 0; --i) a.items.push_back(std::string(1, "pqrs"[Next(4)]));
      m["tags"] = a;
    }
    return m;
  }
  std::string Filter() {
    switch (Next(6)) {
      case 0:
        return absl::StrCat(R"({"field":"year","gte":)", 2015 + Next(10), "}");
      case 1:
        return absl::StrCat(R"({"field":"g","eq":")", std::string(1, "abcd"[Next(4)]), "\"}");
      case 2:
        return absl::StrCat(R"({"field":"n.k","in":[)", Next(4), ",", Next(4), "]}");
      case 3:
        return absl::StrCat(R"({"field":"tags","contains_any":[")",
                            std::string(1, "pqrs"[Next(4)]), "\"]}");
      case 4:
        return R"({"not":{"field":"g","exists":true}})";
      default:
        return absl::StrCat(R"({"and":[{"field":"year","lt":)", 2016 + Next(9),
                            R"(},{"field":"n.s","exists":true}]})");
    }
  }

 private:
  std::mt19937_64 rng_;
};

db::Filter ParseOrDie(const std::string& json) {
  auto f = db::ParseFilterJson(json);
  EXPECT_TRUE(f.ok()) << json << ": " << f.status();
  return *f;
}

// The test's own merge: remove top-level "g" and nested "n.s", set "v",
// and merge {"m": round} into the object "n" (creating it when absent or
// not an object).
db::Metadata ExpectedAfterRound(db::Metadata m, int64_t round) {
  m.erase("g");
  if (auto it = m.find("n"); it != m.end()) {
    if (auto* o = std::get_if<db::Object>(&it->second)) o->fields.erase("s");
  }
  m["v"] = round;
  auto it = m.find("n");
  if (it == m.end() || !std::holds_alternative<db::Object>(it->second)) {
    m["n"] = db::Object{};
    it = m.find("n");
  }
  std::get<db::Object>(it->second).fields["m"] = round;
  return m;
}

MetadataPatch RoundPatch(int64_t round) {
  MetadataPatch p;
  p.remove = {"g", "n.s"};
  p.metadata["v"] = round;
  db::Object n;
  n.fields["m"] = round;
  p.metadata["n"] = n;
  return p;
}

class DocumentSelectionTest : public EngineTest {
 protected:
  void Open() { OpenWith(BaseOptions(), std::make_unique<FakeEmbedder>(kDim, 32, 1)); }

  // A model collection ("c", embedded by the fake model) of kDocs documents.
  void Fill(Gen& g) {
    Open();
    db::CollectionSpec spec;
    spec.name = "c";
    spec.index_spec = "HNSW16";
    ASSERT_TRUE(db_->CreateCollection(spec, VectorOptions{}).ok());
    std::vector<DocumentInput> batch;
    for (int i = 0; i < kDocs; ++i) {
      DocumentInput in;
      in.id = absl::StrCat("d", 1000 + i);
      in.text = absl::StrCat("document number ", i, " about ", std::string(1, "abcd"[g.Next(4)]));
      in.metadata = g.Metadata();
      live_[in.id] = Doc{in.text, {}, in.metadata};
      batch.push_back(std::move(in));
    }
    ASSERT_TRUE(db_->Upsert("c", std::move(batch), absl::InfiniteFuture()).ok());
    for (auto& [id, d] : live_) d.vector = Stored(id).vector;
  }

  db::Document Stored(const std::string& id) {
    auto r = db_->Get("c", {id});
    EXPECT_TRUE(r.ok() && (*r)[0].has_value()) << id;
    return r.ok() && (*r)[0] ? *(*r)[0] : db::Document{};
  }

  std::set<std::string> Accepted(const db::Filter& f) const {
    std::set<std::string> out;
    for (const auto& [id, d] : live_) {
      if (f.Matches(d.metadata)) out.insert(id);
    }
    return out;
  }

  // The collection holds exactly live_: ids, texts, vectors bit for bit,
  // metadata; and its indexes agree with the store.
  void ExpectContent(const std::string& when) {
    SCOPED_TRACE(when);
    std::map<std::string, db::Document> stored;
    std::string token;
    do {
      auto page = db_->List("c", token, 1000);
      ASSERT_TRUE(page.ok()) << page.status();
      for (auto& d : page->documents) stored[d.id] = std::move(d);
      token = page->next_page_token;
    } while (!token.empty());
    ASSERT_EQ(stored.size(), live_.size());
    for (const auto& [id, want] : live_) {
      auto it = stored.find(id);
      ASSERT_NE(it, stored.end()) << id;
      EXPECT_EQ(it->second.text, want.text) << id;
      EXPECT_EQ(it->second.vector, want.vector) << id;
      EXPECT_TRUE(it->second.metadata == want.metadata) << id;
    }
    auto v = db_->Verify("c");
    ASSERT_TRUE(v.ok()) << v.status();
    EXPECT_EQ(v->stored, live_.size());
    EXPECT_EQ(v->indexed, live_.size());
    EXPECT_EQ(v->missing_from_index, 0u);
    EXPECT_EQ(v->stale_in_index, 0u);
    EXPECT_EQ(v->keyword_missing, 0u);
    EXPECT_EQ(v->keyword_stale, 0u);
    auto all = db_->Count("c", nullptr);
    ASSERT_TRUE(all.ok());
    EXPECT_EQ(*all, live_.size());
  }

  std::map<std::string, Doc> live_;
};

TEST_F(DocumentSelectionTest, CountUpdateAndDeleteByFilterEqualTheModel) {
  for (uint64_t seed : {3u, 20261203u}) {
    SCOPED_TRACE(absl::StrCat("seed ", seed));
    live_.clear();
    TearDown();
    SetUp();
    Gen g(seed);
    Fill(g);
    for (int round = 1; round <= 12; ++round) {
      SCOPED_TRACE(absl::StrCat("round ", round));
      const std::string json = g.Filter();
      SCOPED_TRACE(json);
      const db::Filter f = ParseOrDie(json);
      const std::set<std::string> accepted = Accepted(f);

      auto count = db_->Count("c", &f);
      ASSERT_TRUE(count.ok()) << count.status();
      EXPECT_EQ(*count, accepted.size());

      if (round % 3 == 0) {
        auto deleted = db_->DeleteWhere("c", &f);
        ASSERT_TRUE(deleted.ok()) << deleted.status();
        EXPECT_EQ(*deleted, accepted.size());
        for (const auto& id : accepted) live_.erase(id);
      } else {
        DocumentSelection which;
        which.filter = f;
        auto r = db_->UpdateMetadata("c", which, RoundPatch(round));
        ASSERT_TRUE(r.ok()) << r.status();
        EXPECT_EQ(r->matched, accepted.size());
        EXPECT_EQ(r->updated, accepted.size());  // "v" is new each round
        EXPECT_TRUE(r->missing_ids.empty());
        for (const auto& id : accepted) {
          live_[id].metadata = ExpectedAfterRound(live_[id].metadata, round);
        }
      }
      auto after = db_->Count("c", &f);
      ASSERT_TRUE(after.ok());
      EXPECT_EQ(*after, Accepted(f).size());
    }
    ExpectContent("after the rounds");
    Open();  // a restart: the indexes come back from the store and the log
    ExpectContent("after a restart");
  }
}

TEST_F(DocumentSelectionTest, UpdateByIdsReportsMissingAndIsAllOrNothing) {
  Gen g(11);
  Fill(g);
  DocumentSelection which;
  which.ids = {"d1001", "nope", "d1002", "d1001"};
  MetadataPatch p;
  p.metadata["v"] = int64_t{5};
  auto r = db_->UpdateMetadata("c", which, p);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->matched, 2u);
  EXPECT_EQ(r->updated, 2u);
  EXPECT_EQ(r->missing_ids, std::vector<std::string>{"nope"});
  for (const char* id : {"d1001", "d1002"}) live_[id].metadata["v"] = int64_t{5};
  // The same patch again changes nothing and writes nothing.
  r = db_->UpdateMetadata("c", which, p);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->matched, 2u);
  EXPECT_EQ(r->updated, 0u);

  // Replace: the whole metadata.
  which.ids = {"d1003"};
  MetadataPatch replace;
  replace.mode = MetadataPatch::Mode::kReplace;
  replace.metadata["only"] = std::string("this");
  ASSERT_TRUE(db_->UpdateMetadata("c", which, replace).ok());
  live_["d1003"].metadata = replace.metadata;

  // A merge that takes one document past the field limit: refused, and no
  // document of the call changed (by ids, one batch).
  MetadataPatch big;
  for (size_t i = 0; i < db::kMaxMetadataFields; ++i) big.metadata[absl::StrCat("f", i)] = true;
  which.ids = {"d1004", "d1005"};
  ASSERT_TRUE(db::ValidateMetadata(big.metadata).ok());
  auto refused = db_->UpdateMetadata("c", which, big);
  EXPECT_EQ(refused.status().code(), absl::StatusCode::kInvalidArgument) << refused.status();
  ExpectContent("after the by-ids updates");
}

TEST_F(DocumentSelectionTest, BadRequestsAreRefusedWithNothingChanged) {
  Gen g(12);
  Fill(g);
  const db::Filter f = ParseOrDie(R"({"field":"year","gte":2015})");
  DocumentSelection both;
  both.ids = {"d1001"};
  both.filter = f;
  MetadataPatch p;
  p.metadata["v"] = int64_t{1};
  EXPECT_EQ(db_->UpdateMetadata("c", both, p).status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(db_->UpdateMetadata("c", DocumentSelection{}, p).status().code(),
            absl::StatusCode::kInvalidArgument);
  DocumentSelection one;
  one.ids = {"d1001"};
  EXPECT_EQ(db_->UpdateMetadata("c", one, MetadataPatch{}).status().code(),
            absl::StatusCode::kInvalidArgument);  // nothing to do
  MetadataPatch replace_with_remove;
  replace_with_remove.mode = MetadataPatch::Mode::kReplace;
  replace_with_remove.remove = {"g"};
  EXPECT_EQ(db_->UpdateMetadata("c", one, replace_with_remove).status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(db_->Count("nope", &f).status().code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(db_->DeleteWhere("nope", &f).status().code(), absl::StatusCode::kNotFound);
  // A cancelled delete stops before its first batch.
  auto cancelled = db_->DeleteWhere("c", &f, {}, [] { return true; });
  EXPECT_EQ(cancelled.status().code(), absl::StatusCode::kCancelled);
  ExpectContent("after the refusals");
}

TEST(MetadataPatchTest, MergeRemoveAndReplaceFollowTheContract) {
  db::Metadata m;
  m["a"] = int64_t{1};
  m["dotted.key"] = std::string("old");  // a top-level key written with a '.'
  db::Object author;
  author.fields["name"] = std::string("ann");
  author.fields["age"] = int64_t{40};
  m["author"] = author;
  m["list"] = db::Array{{std::string("x")}};

  MetadataPatch p;
  p.remove = {"author.age", "dotted.key", "missing.path", "a.b"};
  db::Object add;
  add.fields["city"] = std::string("oslo");
  p.metadata["author"] = add;                            // merged into the object
  p.metadata["list"] = db::Array{{std::string("y")}};  // an array is replaced whole
  const db::Metadata out = ApplyPatch(m, p);

  db::Metadata want;
  want["a"] = int64_t{1};
  db::Object want_author;
  want_author.fields["name"] = std::string("ann");
  want_author.fields["city"] = std::string("oslo");
  want["author"] = want_author;
  want["list"] = db::Array{{std::string("y")}};
  EXPECT_TRUE(out == want);

  // A scalar over an object, and an object over a scalar: replaced.
  MetadataPatch flip;
  flip.metadata["author"] = std::string("anonymous");
  flip.metadata["a"] = add;
  const db::Metadata flipped = ApplyPatch(m, flip);
  EXPECT_TRUE(flipped.at("author") == db::Value(std::string("anonymous")));
  EXPECT_TRUE(flipped.at("a") == db::Value(add));

  MetadataPatch replace;
  replace.mode = MetadataPatch::Mode::kReplace;
  EXPECT_TRUE(ValidatePatch(replace).ok());  // replace with nothing clears the metadata
  EXPECT_TRUE(ApplyPatch(m, replace).empty());
  MetadataPatch bad;
  bad.remove = {""};
  EXPECT_EQ(ValidatePatch(bad).code(), absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace neodb::engine
