// A Collection on its own, with no Database around it: what a replica of a
// shard will be. It is driven only by its documents' changes (Apply) over a
// store, and it validates writes and answers searches by itself.
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "db/store.h"
#include "engine/change_replay.h"
#include "engine/collection.h"
#include "gtest/gtest.h"

namespace neodb::engine {
namespace {

const absl::Time kFar = absl::InfiniteFuture();

class CollectionTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           absl::StrCat("neodb_collection_test_",
                        ::testing::UnitTest::GetInstance()->current_test_info()->name(), "_",
                        getpid());
    std::filesystem::remove_all(dir_);
    auto store = db::Store::Open(dir_.string());
    ASSERT_TRUE(store.ok()) << store.status();
    store_ = std::move(*store);
  }
  void TearDown() override {
    collection_.reset();
    store_.reset();
    std::filesystem::remove_all(dir_);
  }

  // A collection of client vectors (no model needed), dimension 3.
  void Create() {
    db::CollectionSpec spec;
    spec.name = "c";
    spec.dimension = 3;
    spec.vector_source = "external";
    spec.model_id = "external:c";
    ASSERT_TRUE(store_->CreateCollection(spec).ok());
    auto settings = ParseSettings(spec);
    ASSERT_TRUE(settings.ok()) << settings.status();
    auto indexes = IndexSet::Make(*settings);
    ASSERT_TRUE(indexes.ok()) << indexes.status();
    collection_ = std::make_shared<Collection>(*store_, *settings, std::move(*indexes));
  }

  static DocumentInput Doc(std::string id, std::string text, std::vector<float> v) {
    DocumentInput d;
    d.id = std::move(id);
    d.text = std::move(text);
    d.vector = std::move(v);
    return d;
  }

  // Writes through the collection's own checks, then hands it the committed
  // changes after `applied_` (the change log is its only input).
  absl::Status Write(std::vector<DocumentInput> docs) {
    auto prepared = Collection::PrepareWrite(*collection_->state(), nullptr, std::move(docs), 0,
                                             kFar, {});
    if (!prepared.ok()) return prepared.status();
    auto seqs = store_->Upsert("c", std::move(prepared->documents));
    if (!seqs.ok()) return seqs.status();
    return Feed();
  }
  absl::Status Feed() {
    ReplaySink sink;
    sink.wants = [](const std::string& name) { return name == "c"; };
    sink.apply = [&](const std::string&, std::span<const Change> changes) {
      return collection_->Apply(changes);
    };
    const uint64_t last = store_->LastSequence();
    auto r = ReplayChanges(*store_, applied_ + 1, last, sink);
    if (!r.ok()) return r.status();
    applied_ = last;
    return absl::OkStatus();
  }

  std::vector<std::string> Ids(SearchMode mode, const std::vector<float>& v,
                               const std::string& query, int k) {
    SearchParams p;
    p.k = k;
    p.mode = mode;
    auto r = collection_->Search(*collection_->state(), &v, query, p, mode);
    EXPECT_TRUE(r.ok()) << r.status();
    std::vector<std::string> ids;
    if (r.ok()) {
      for (const Hit& h : r->hits) ids.push_back(h.id);
    }
    return ids;
  }

  std::filesystem::path dir_;
  std::unique_ptr<db::Store> store_;
  std::shared_ptr<Collection> collection_;
  uint64_t applied_ = 0;
};

TEST_F(CollectionTest, RefusesABadWriteWholeBeforeTheStoreSeesIt) {
  Create();
  std::vector<DocumentInput> docs = {Doc("a", "red apple", {1, 0, 0}),
                                     Doc("b", "green pear", {0, 1})};
  absl::Status s = Write(std::move(docs));
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
  EXPECT_NE(s.message().find("document 'b'"), std::string::npos) << s;
  DocumentInput no_vector;
  no_vector.id = "c";
  no_vector.text = "plum";
  s = Write({no_vector});
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
  EXPECT_NE(s.message().find("has no vector"), std::string::npos) << s;
  EXPECT_EQ(*store_->Count("c"), 0u);
  EXPECT_EQ(collection_->state()->indexes->vector().size(), 0u);
}

TEST_F(CollectionTest, ChangesAloneKeepItsSearchesCurrent) {
  Create();
  ASSERT_TRUE(Write({Doc("a", "red apple", {1, 0, 0}), Doc("b", "green pear", {0, 1, 0}),
                     Doc("c", "yellow banana", {0, 0, 1})})
                  .ok());
  EXPECT_EQ(Ids(SearchMode::kVector, {0.9f, 0.1f, 0}, "", 2),
            (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(Ids(SearchMode::kKeyword, {}, "pear", 3), (std::vector<std::string>{"b"}));
  // An overwrite and a delete arrive as changes too.
  ASSERT_TRUE(Write({Doc("a", "green apple", {0, 0.9f, 0.1f})}).ok());
  ASSERT_TRUE(store_->Delete("c", std::vector<std::string>{"b"}).ok());
  ASSERT_TRUE(Feed().ok());
  EXPECT_EQ(Ids(SearchMode::kVector, {0, 1, 0}, "", 3), (std::vector<std::string>{"a", "c"}));
  EXPECT_EQ(Ids(SearchMode::kKeyword, {}, "green", 3), (std::vector<std::string>{"a"}));
  // Hybrid: the vector leg finds both live documents, the keyword leg "c".
  std::vector<std::string> hybrid = Ids(SearchMode::kHybrid, {0, 1, 0}, "banana", 3);
  std::sort(hybrid.begin(), hybrid.end());
  EXPECT_EQ(hybrid, (std::vector<std::string>{"a", "c"}));
  EXPECT_EQ(collection_->state()->indexes->vector().size(), 2u);
}

TEST_F(CollectionTest, ReplayingChangesTwiceChangesNothing) {
  // A replica that receives a change again (a retry after a lost ack) must
  // end where it was: Apply is idempotent.
  Create();
  ASSERT_TRUE(Write({Doc("a", "red apple", {1, 0, 0}), Doc("b", "green pear", {0, 1, 0})}).ok());
  const auto before = Ids(SearchMode::kHybrid, {1, 0, 0}, "pear", 5);
  applied_ = 0;  // hand it the whole log again
  ASSERT_TRUE(Feed().ok());
  EXPECT_EQ(Ids(SearchMode::kHybrid, {1, 0, 0}, "pear", 5), before);
  EXPECT_EQ(collection_->state()->indexes->vector().size(), 2u);
  EXPECT_FALSE(collection_->needs_rebuild);
}

}  // namespace
}  // namespace neodb::engine
