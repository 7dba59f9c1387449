// Each collection has its own write lock (collection.h, database.h's lock
// order): a write to one collection completes while another collection is
// held inside its snapshot, and writers on several collections at once, with
// snapshot rounds trimming the log between them, leave every collection with
// exactly its documents and its indexes in agreement with the store, after a
// reopen that replays the log from each collection's own snapshot position
// too. Synchronised on hooks and joins, never on timing.
#include <map>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/notification.h"
#include "engine/database.h"
#include "engine/fake_embedder.h"
#include "gtest/gtest.h"
#include "tests/engine/engine_test_util.h"

namespace neodb::engine {
namespace {

constexpr int kDim = 8;
const absl::Time kFar = absl::InfiniteFuture();

class CollectionLocksTest : public EngineTest {
 protected:
  void Open(DatabaseOptions o) { OpenWith(o, std::make_unique<FakeEmbedder>(kDim, 32, 1)); }
  void Create(const std::string& name) {
    db::CollectionSpec spec;
    spec.name = name;
    spec.index_spec = "Flat";
    auto info = db_->CreateCollection(spec);
    ASSERT_TRUE(info.ok()) << info.status();
  }
  void Put(const std::string& c, const std::string& id, const std::string& text) {
    auto r = db_->Upsert(c, {{id, text, {}}}, kFar);
    ASSERT_TRUE(r.ok()) << r.status();
  }
  // The collection holds exactly `want` (id -> text), and its indexes hold
  // exactly what its store does.
  void ExpectExactly(const std::string& c, const std::map<std::string, std::string>& want) {
    auto count = db_->Count(c, nullptr);
    ASSERT_TRUE(count.ok()) << count.status();
    EXPECT_EQ(*count, want.size()) << c;
    std::map<std::string, std::string> have;
    std::string token;
    do {
      auto page = db_->List(c, token, 1000);
      ASSERT_TRUE(page.ok()) << page.status();
      for (const db::Document& d : page->documents) have[d.id] = d.text;
      token = page->next_page_token;
    } while (!token.empty());
    EXPECT_EQ(have, want) << c;
    auto v = db_->Verify(c);
    ASSERT_TRUE(v.ok()) << v.status();
    EXPECT_EQ(v->stored, want.size()) << c;
    EXPECT_EQ(v->indexed, want.size()) << c;
    EXPECT_EQ(v->missing_from_index, 0u) << c;
    EXPECT_EQ(v->stale_in_index, 0u) << c;
    EXPECT_TRUE(v->keyword_content_matches) << c;
  }
};

TEST_F(CollectionLocksTest, WriteToOneCollectionCompletesWhileAnotherIsInItsSnapshot) {
  // The first Snapshot() stops before its first file write: collection "a"'s
  // (a round goes in name order), with "a"'s write lock held.
  absl::Notification paused, release;
  std::string paused_at;
  DatabaseOptions o = BaseOptions();
  o.test_snapshot_pause_at = 1;
  o.test_pause = [&](const std::string& what) {
    paused_at = what;
    paused.Notify();
    release.WaitForNotification();
  };
  Open(o);
  Create("a");
  Create("b");
  Put("a", "a1", "apple pie");
  Put("b", "b1", "banana bread");

  std::thread snapshot([&] {
    auto s = db_->Snapshot();
    EXPECT_TRUE(s.ok()) << s.status();
  });
  paused.WaitForNotification();
  EXPECT_TRUE(absl::StrContains(paused_at, "/snapshots/a")) << paused_at;

  // While "a" is held inside its snapshot, "b" takes writes, deletes and
  // searches, and each is visible once it returns. (With one database-wide
  // write lock the upsert would wait for the snapshot: the wait below would
  // end on its limit, failing, and only then release the snapshot.)
  absl::Notification b_done;
  std::thread writer([&] {
    auto r = db_->Upsert("b", {{"b2", "blueberry muffin", {}}, {"b3", "brown bread", {}}}, kFar);
    EXPECT_TRUE(r.ok()) << r.status();
    auto d = db_->Delete("b", {"b1"});
    EXPECT_TRUE(d.ok()) << d.status();
    if (d.ok()) EXPECT_EQ(*d, 1u);
    b_done.Notify();
  });
  const bool b_finished = b_done.WaitForNotificationWithTimeout(absl::Seconds(120));
  EXPECT_TRUE(b_finished) << "a write to 'b' waited for 'a''s snapshot";
  if (b_finished) {
    SearchParams p;
    p.k = 5;
    p.mode = SearchMode::kKeyword;
    auto hits = db_->NearText("b", "bread", std::nullopt, p, kFar);
    ASSERT_TRUE(hits.ok()) << hits.status();
    ASSERT_EQ(hits->hits.size(), 1u);
    EXPECT_EQ(hits->hits[0].id, "b3");
  }
  release.Notify();
  writer.join();
  snapshot.join();
  ExpectExactly("a", {{"a1", "apple pie"}});
  ExpectExactly("b", {{"b2", "blueberry muffin"}, {"b3", "brown bread"}});
}

TEST_F(CollectionLocksTest, ConcurrentWritersOnSeveralCollectionsStayExactAcrossReopen) {
  // Six writers on four collections ("c0" and "c1" have two writers each, on
  // disjoint ids), each a fixed sequence of upserts, overwrites and deletes;
  // a seventh thread takes snapshot rounds meanwhile, each trimming the log.
  constexpr int kCollections = 4;
  constexpr int kWriters = 6;
  constexpr int kOps = 240;
  constexpr int kSnapshots = 12;
  DatabaseOptions o = BaseOptions();
  o.snapshot_on_close = false;  // the first reopen stands in for a crash
  Open(o);
  for (int c = 0; c < kCollections; ++c) Create(absl::StrCat("c", c));

  std::vector<std::map<std::string, std::string>> expected(kWriters);
  std::vector<std::thread> threads;
  for (int w = 0; w < kWriters; ++w) {
    threads.emplace_back([&, w] {
      const std::string c = absl::StrCat("c", w % kCollections);
      std::map<std::string, std::string>& mine = expected[w];
      for (int i = 0; i < kOps; ++i) {
        const std::string id = absl::StrCat("w", w, "-", (i * 7) % 50);
        if (i % 5 == 4) {
          auto d = db_->Delete(c, {id});
          ASSERT_TRUE(d.ok()) << d.status();
          ASSERT_EQ(*d, mine.erase(id));
        } else {
          const std::string text = absl::StrCat("writer", w, " op", i, " word", i % 9);
          auto r = db_->Upsert(c, {{id, text, {}}}, kFar);
          ASSERT_TRUE(r.ok()) << r.status();
          mine[id] = text;
        }
      }
    });
  }
  threads.emplace_back([&] {
    for (int i = 0; i < kSnapshots; ++i) {
      auto s = db_->Snapshot();
      ASSERT_TRUE(s.ok()) << s.status();
    }
  });
  for (std::thread& t : threads) t.join();

  std::vector<std::map<std::string, std::string>> want(kCollections);
  for (int w = 0; w < kWriters; ++w) want[w % kCollections].insert(expected[w].begin(), expected[w].end());
  auto check = [&](const char* when) {
    SCOPED_TRACE(when);
    for (int c = 0; c < kCollections; ++c) ExpectExactly(absl::StrCat("c", c), want[c]);
  };
  check("live");
  // Closed without a snapshot: each collection's indexes come back from its
  // own newest snapshot plus the log after its own position.
  Open(o);
  check("reopened after a close without snapshot");
  // And once more from snapshots alone.
  ASSERT_TRUE(db_->Snapshot().ok());
  Open(o);
  check("reopened from snapshots");
  EXPECT_EQ(db_->Stats().replayed_changes, 0u);
  EXPECT_EQ(db_->Stats().index_rebuilds, 0u);
}

}  // namespace
}  // namespace neodb::engine
