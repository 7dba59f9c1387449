#include "db/store.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <map>
#include <set>
#include <thread>

#include "absl/strings/str_cat.h"
#include "db/codec.h"
#include "rocksdb/db.h"

namespace neodb::db {
namespace {

namespace fs = std::filesystem;

class StoreTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           absl::StrCat("neodb_store_test_", ::getpid(), "_",
                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    Reopen();
  }
  void TearDown() override {
    store_.reset();
    fs::remove_all(dir_);
  }
  void Reopen() {
    store_.reset();
    StoreOptions o;
    o.sync_writes = false;  // tests do not need power-loss durability
    auto s = Store::Open(dir_.string(), o);
    ASSERT_TRUE(s.ok()) << s.status();
    store_ = std::move(*s);
  }
  CollectionSpec Spec(std::string name = "c", uint32_t dim = 3) {
    CollectionSpec spec;
    spec.name = name;
    spec.dimension = dim;
    return spec;
  }
  static Document Doc(std::string id, float x, Metadata md = {}) {
    // Aggregate init: assigning a short literal to model_id here trips a GCC 12
    // -Wrestrict false positive (GCC bug 105651).
    std::string text = absl::StrCat("text of ", id);
    return Document{std::move(id), std::move(text), std::move(md), {x, x + 1, x + 2}, "m", 0};
  }
  std::vector<ChangelogRecord> Log(uint64_t from = 0) {
    std::vector<ChangelogRecord> out;
    EXPECT_TRUE(store_
                    ->ReadChangelog(from,
                                    [&](const ChangelogRecord& r) {
                                      out.push_back(r);
                                      return absl::OkStatus();
                                    })
                    .ok());
    return out;
  }

  fs::path dir_;
  std::unique_ptr<Store> store_;
};

TEST_F(StoreTest, CollectionLifecycle) {
  ASSERT_TRUE(store_->CreateCollection(Spec("b")).ok());
  ASSERT_TRUE(store_->CreateCollection(Spec("a")).ok());
  EXPECT_EQ(store_->CreateCollection(Spec("a")).code(), absl::StatusCode::kAlreadyExists);
  EXPECT_EQ(store_->CreateCollection(Spec("bad name")).code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(store_->CreateCollection(Spec(std::string(129, 'x'))).code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(store_->CreateCollection(Spec("z", 0)).code(), absl::StatusCode::kInvalidArgument);
  auto list = store_->ListCollections();
  ASSERT_TRUE(list.ok());
  ASSERT_EQ(list->size(), 2u);
  EXPECT_EQ((*list)[0].name, "a");
  EXPECT_GT((*list)[0].created_at_micros, 0);
  CollectionUpdate u;
  u.model_id = "new-model";
  auto updated = store_->UpdateCollection("a", u);
  ASSERT_TRUE(updated.ok());
  EXPECT_EQ(updated->model_id, "new-model");
  EXPECT_EQ(store_->GetCollection("a")->model_id, "new-model");
  EXPECT_EQ(store_->GetCollection("nope").status().code(), absl::StatusCode::kNotFound);
}

TEST_F(StoreTest, UpsertGetRoundTripAndChangelog) {
  ASSERT_TRUE(store_->CreateCollection(Spec()).ok());
  uint64_t base = store_->LastSequence();
  auto seqs = store_->Upsert("c", {Doc("x", 1, {{"year", int64_t{2020}}}), Doc("y", 2)});
  ASSERT_TRUE(seqs.ok()) << seqs.status();
  EXPECT_EQ(*seqs, (std::vector<uint64_t>{base + 1, base + 2}));
  EXPECT_EQ(store_->LastSequence(), base + 2);
  auto x = store_->Get("c", "x");
  ASSERT_TRUE(x.ok());
  EXPECT_EQ(x->text, "text of x");
  EXPECT_EQ(std::get<int64_t>(x->metadata.at("year")), 2020);
  EXPECT_EQ(x->vector, (std::vector<float>{1, 2, 3}));
  EXPECT_EQ(x->model_id, "m");
  EXPECT_NE(x->internal_id, 0u);
  EXPECT_EQ(*store_->Count("c"), 2u);

  auto log = Log(base + 1);
  ASSERT_EQ(log.size(), 2u);
  EXPECT_EQ(log[0].op, ChangeOp::kUpsert);
  EXPECT_EQ(log[0].doc_id, "x");
  EXPECT_EQ(log[0].internal_id, x->internal_id);
  EXPECT_EQ(log[0].previous_internal_id, 0u);

  auto by_internal = store_->GetByInternalId("c", x->internal_id);
  ASSERT_TRUE(by_internal.ok());
  EXPECT_EQ(by_internal->id, "x");
}

TEST_F(StoreTest, OverwriteGetsNewInternalIdAndOldOneIsStale) {
  ASSERT_TRUE(store_->CreateCollection(Spec()).ok());
  ASSERT_TRUE(store_->Upsert("c", {Doc("x", 1)}).ok());
  uint64_t old_id = store_->Get("c", "x")->internal_id;
  ASSERT_TRUE(store_->Upsert("c", {Doc("x", 5)}).ok());
  auto x = store_->Get("c", "x");
  ASSERT_TRUE(x.ok());
  EXPECT_NE(x->internal_id, old_id);
  EXPECT_EQ(x->vector[0], 5);
  EXPECT_EQ(*store_->Count("c"), 1u);
  auto log = Log();
  ASSERT_FALSE(log.empty());
  EXPECT_EQ(log.back().internal_id, x->internal_id);
  EXPECT_EQ(log.back().previous_internal_id, old_id);
  EXPECT_EQ(store_->GetByInternalId("c", old_id).status().code(), absl::StatusCode::kNotFound);
  EXPECT_TRUE(store_->GetByInternalId("c", x->internal_id).ok());
}

TEST_F(StoreTest, RepeatedIdInOneBatchActsSequentially) {
  ASSERT_TRUE(store_->CreateCollection(Spec()).ok());
  ASSERT_TRUE(store_->Upsert("c", {Doc("x", 1), Doc("x", 2)}).ok());
  EXPECT_EQ(*store_->Count("c"), 1u);
  auto log = Log();
  ASSERT_GE(log.size(), 2u);
  const auto& a = log[log.size() - 2];
  const auto& b = log.back();
  EXPECT_EQ(b.previous_internal_id, a.internal_id);
  EXPECT_EQ(store_->Get("c", "x")->vector[0], 2);
}

TEST_F(StoreTest, InvalidBatchWritesNothing) {
  ASSERT_TRUE(store_->CreateCollection(Spec()).ok());
  uint64_t seq = store_->LastSequence();
  Document bad = Doc("bad", 1);
  bad.vector.push_back(4);  // wrong dimension
  auto r = store_->Upsert("c", {Doc("good", 1), bad});
  EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(r.status().message().find("dimension"), std::string::npos);
  EXPECT_EQ(store_->LastSequence(), seq);
  EXPECT_EQ(store_->Get("c", "good").status().code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(*store_->Count("c"), 0u);

  Document nan = Doc("n", 1);
  nan.vector[1] = std::nanf("");
  EXPECT_EQ(store_->Upsert("c", {nan}).status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(store_->Upsert("c", {Doc("", 1)}).status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(store_->Upsert("missing", {Doc("a", 1)}).status().code(), absl::StatusCode::kNotFound);
}

TEST_F(StoreTest, DeleteRemovesAndLogs) {
  ASSERT_TRUE(store_->CreateCollection(Spec()).ok());
  ASSERT_TRUE(store_->Upsert("c", {Doc("x", 1), Doc("y", 2)}).ok());
  uint64_t xid = store_->Get("c", "x")->internal_id;
  std::vector<std::string> ids = {"x", "nope", "x"};
  auto seqs = store_->Delete("c", ids);
  ASSERT_TRUE(seqs.ok());
  EXPECT_EQ(seqs->size(), 1u);
  EXPECT_EQ(store_->Get("c", "x").status().code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(store_->GetByInternalId("c", xid).status().code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(*store_->Count("c"), 1u);
  auto log = Log();
  EXPECT_EQ(log.back().op, ChangeOp::kDelete);
  EXPECT_EQ(log.back().doc_id, "x");
  EXPECT_EQ(log.back().previous_internal_id, xid);
}

TEST_F(StoreTest, PaginationCoversEverythingExactlyOnce) {
  ASSERT_TRUE(store_->CreateCollection(Spec()).ok());
  ASSERT_TRUE(store_->CreateCollection(Spec("other")).ok());
  std::vector<Document> docs;
  std::set<std::string> want;
  for (int i = 0; i < 253; ++i) {
    std::string id = absl::StrCat("doc", i * 7919 % 1000);
    if (i % 50 == 0) id += std::string("\0\xff", 2);  // binary ids round-trip through tokens
    want.insert(id);
    docs.push_back(Doc(id, i));
  }
  ASSERT_TRUE(store_->Upsert("c", docs).ok());
  ASSERT_TRUE(store_->Upsert("other", {Doc("zzz", 1)}).ok());
  std::set<std::string> seen;
  std::string token;
  int pages = 0;
  do {
    auto page = store_->List("c", token, 10);
    ASSERT_TRUE(page.ok()) << page.status();
    for (const auto& d : page->documents) EXPECT_TRUE(seen.insert(d.id).second) << d.id;
    token = page->next_page_token;
    for (char ch : token) EXPECT_TRUE(std::isxdigit(static_cast<unsigned char>(ch)));
    ++pages;
  } while (!token.empty());
  EXPECT_EQ(seen, want);
  EXPECT_EQ(pages, 26);
  EXPECT_EQ(store_->List("c", "zz", 10).status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(store_->List("c", "", 100000).status().code(), absl::StatusCode::kInvalidArgument);

  size_t scanned = 0;
  uint64_t covered = 0;
  ASSERT_TRUE(store_
                  ->ScanDocuments(
                      "c",
                      [&](const Document&) {
                        ++scanned;
                        return absl::OkStatus();
                      },
                      &covered)
                  .ok());
  EXPECT_EQ(scanned, want.size());
  EXPECT_EQ(covered, store_->LastSequence());
}

TEST_F(StoreTest, DropCollectionDeletesItsDataOnly) {
  ASSERT_TRUE(store_->CreateCollection(Spec("a")).ok());
  ASSERT_TRUE(store_->CreateCollection(Spec("ab")).ok());
  ASSERT_TRUE(store_->Upsert("a", {Doc("x", 1), Doc("y", 1)}).ok());
  ASSERT_TRUE(store_->Upsert("ab", {Doc("x", 2)}).ok());
  ASSERT_TRUE(store_->DropCollection("a").ok());
  EXPECT_EQ(Log().back().op, ChangeOp::kDropCollection);
  EXPECT_EQ(store_->GetCollection("a").status().code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(store_->DropCollection("a").code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(store_->Get("ab", "x")->vector[0], 2);
  // Recreating the name starts empty.
  ASSERT_TRUE(store_->CreateCollection(Spec("a")).ok());
  EXPECT_EQ(*store_->Count("a"), 0u);
  EXPECT_EQ(store_->Get("a", "x").status().code(), absl::StatusCode::kNotFound);
  auto page = store_->List("a", "", 10);
  ASSERT_TRUE(page.ok());
  EXPECT_TRUE(page->documents.empty());
}

TEST_F(StoreTest, ReopenPersistsEverythingAndIdsKeepGrowing) {
  ASSERT_TRUE(store_->CreateCollection(Spec()).ok());
  ASSERT_TRUE(store_->Upsert("c", {Doc("x", 1)}).ok());
  uint64_t xid = store_->Get("c", "x")->internal_id;
  uint64_t seq = store_->LastSequence();
  Reopen();
  EXPECT_EQ(store_->LastSequence(), seq);
  EXPECT_EQ(store_->Get("c", "x")->internal_id, xid);
  EXPECT_EQ(*store_->Count("c"), 1u);
  ASSERT_TRUE(store_->Upsert("c", {Doc("y", 1)}).ok());
  EXPECT_GT(store_->Get("c", "y")->internal_id, xid);
  EXPECT_EQ(store_->LastSequence(), seq + 1);
}

TEST_F(StoreTest, TrimChangelogAndCheckpoint) {
  ASSERT_TRUE(store_->CreateCollection(Spec()).ok());
  ASSERT_TRUE(store_->Upsert("c", {Doc("x", 1), Doc("y", 2), Doc("z", 3)}).ok());
  uint64_t last = store_->LastSequence();
  ASSERT_TRUE(store_->TrimChangelog(last - 1).ok());
  auto log = Log();
  ASSERT_EQ(log.size(), 1u);
  EXPECT_EQ(log[0].seq, last);
  fs::path cp = dir_.string() + "_checkpoint";
  fs::remove_all(cp);
  ASSERT_TRUE(store_->CreateCheckpoint(cp.string()).ok());
  {
    auto copy = Store::Open(cp.string());
    ASSERT_TRUE(copy.ok()) << copy.status();
    EXPECT_EQ((*copy)->Get("c", "y")->vector[0], 2);
    EXPECT_EQ((*copy)->LastSequence(), last);
  }
  fs::remove_all(cp);
}

TEST_F(StoreTest, CorruptRecordIsAStatusNotACrash) {
  ASSERT_TRUE(store_->CreateCollection(Spec()).ok());
  ASSERT_TRUE(store_->Upsert("c", {Doc("x", 1)}).ok());
  store_.reset();
  {
    // Write garbage under the document key with raw RocksDB.
    std::vector<rocksdb::ColumnFamilyDescriptor> cfs;
    for (const char* n : {"default", "collections", "documents", "id_map", "changelog", "meta"}) {
      cfs.emplace_back(n, rocksdb::ColumnFamilyOptions());
    }
    std::vector<rocksdb::ColumnFamilyHandle*> handles;
    rocksdb::DB* raw;
    ASSERT_TRUE(rocksdb::DB::Open(rocksdb::Options(), dir_.string(), cfs, &handles, &raw).ok());
    std::string key("c\0x", 3);
    ASSERT_TRUE(raw->Put(rocksdb::WriteOptions(), handles[2], key, "\x01\x05garbage").ok());
    for (auto* h : handles) raw->DestroyColumnFamilyHandle(h);
    delete raw;
  }
  Reopen();
  EXPECT_EQ(store_->Get("c", "x").status().code(), absl::StatusCode::kDataLoss);
  EXPECT_EQ(store_->List("c", "", 10).status().code(), absl::StatusCode::kDataLoss);
}

TEST_F(StoreTest, ConcurrentWritersGetGapFreeChangelogAndUniqueIds) {
  ASSERT_TRUE(store_->CreateCollection(Spec()).ok());
  const uint64_t base = store_->LastSequence();
  constexpr int kThreads = 4, kBatches = 25, kPerBatch = 4;
  std::vector<std::thread> writers;
  std::atomic<int> failures{0};
  for (int t = 0; t < kThreads; ++t) {
    writers.emplace_back([&, t] {
      for (int b = 0; b < kBatches; ++b) {
        std::vector<Document> docs;
        // Ids overlap across threads on purpose: overwrites race.
        for (int i = 0; i < kPerBatch; ++i)
          docs.push_back(Doc(absl::StrCat("d", (b * kPerBatch + i) % 30), t));
        if (!store_->Upsert("c", docs).ok()) ++failures;
      }
    });
  }
  for (auto& w : writers) w.join();
  ASSERT_EQ(failures, 0);
  auto log = Log(base + 1);
  ASSERT_EQ(log.size(), size_t{kThreads * kBatches * kPerBatch});
  std::set<uint64_t> internal_ids;
  std::map<std::string, uint64_t> current;  // replaying the log in order
  for (size_t i = 0; i < log.size(); ++i) {
    EXPECT_EQ(log[i].seq, base + 1 + i);
    EXPECT_TRUE(internal_ids.insert(log[i].internal_id).second);
    auto it = current.find(log[i].doc_id);
    EXPECT_EQ(log[i].previous_internal_id, it == current.end() ? 0 : it->second);
    current[log[i].doc_id] = log[i].internal_id;
  }
  // Replaying the log reproduces the store exactly.
  EXPECT_EQ(*store_->Count("c"), current.size());
  for (const auto& [id, internal] : current) EXPECT_EQ(store_->Get("c", id)->internal_id, internal);
}

}  // namespace
}  // namespace neodb::db

namespace neodb::db {
namespace {

// A replicated write's position in its source log is committed with the
// write itself: it survives a reopen, moves with no-op writes too, is kept
// per collection and source, and goes with a dropped collection.
TEST_F(StoreTest, SourcePositionIsCommittedWithTheWrite) {
  ASSERT_TRUE(store_->CreateCollection(Spec("c")).ok());
  ASSERT_TRUE(store_->CreateCollection(Spec("d")).ok());
  EXPECT_EQ(*store_->SourcePositionOf("c", "stream-0"), 0u);
  SourcePosition from{"stream-0", 7};
  ASSERT_TRUE(store_->Upsert("c", {Doc("a", 1), Doc("b", 2)}, &from).ok());
  from.position = 9;
  ASSERT_TRUE(store_->Delete("c", std::vector<std::string>{"a", "missing"}, &from).ok());
  SourcePosition other{"stream-1", 3};
  ASSERT_TRUE(store_->Upsert("c", {}, &other).ok());  // nothing to write, still recorded
  from.position = 12;
  ASSERT_TRUE(store_->Delete("c", std::vector<std::string>{"missing"}, &from).ok());
  Reopen();
  EXPECT_EQ(*store_->SourcePositionOf("c", "stream-0"), 12u);
  EXPECT_EQ(*store_->SourcePositionOf("c", "stream-1"), 3u);
  EXPECT_EQ(*store_->SourcePositionOf("d", "stream-0"), 0u);
  EXPECT_EQ(*store_->Count("c"), 1u);
  // A write the store refuses records no position either.
  SourcePosition bad{"stream-0", 20};
  Document wrong = Doc("x", 1);
  wrong.vector.push_back(4);  // dimension 4 in a collection of 3
  EXPECT_FALSE(store_->Upsert("c", {wrong}, &bad).ok());
  EXPECT_EQ(*store_->SourcePositionOf("c", "stream-0"), 12u);
  SourcePosition nameless{"", 1};
  EXPECT_EQ(store_->Upsert("c", {Doc("y", 1)}, &nameless).status().code(),
            absl::StatusCode::kInvalidArgument);
  // Dropped and created again: it starts from nothing.
  ASSERT_TRUE(store_->DropCollection("c").ok());
  ASSERT_TRUE(store_->CreateCollection(Spec("c")).ok());
  EXPECT_EQ(*store_->SourcePositionOf("c", "stream-0"), 0u);
  EXPECT_EQ(*store_->SourcePositionOf("c", "stream-1"), 0u);
  EXPECT_EQ(store_->SourcePositionOf("gone", "stream-0").status().code(),
            absl::StatusCode::kNotFound);
}

// The WAL on disk stays near the memtable budget: without a bound, the "meta"
// column family (a few bytes of counters per batch) never fills its memtable
// and pins every WAL file written since it last flushed (25.6 MiB here with
// RocksDB's default bound).
TEST_F(StoreTest, WriteAheadLogStaysNearTheMemtableBudget) {
  store_.reset();
  StoreOptions o;
  o.sync_writes = false;
  o.memtable_bytes = 1 << 20;
  auto opened = Store::Open(dir_.string(), o);
  ASSERT_TRUE(opened.ok()) << opened.status();
  store_ = std::move(*opened);
  ASSERT_TRUE(store_->CreateCollection(Spec()).ok());
  const std::string filler(16 << 10, 'w');
  constexpr int kBatches = 160, kPerBatch = 16;  // 40 MiB of text
  auto wal_bytes = [&] {
    // RocksDB deletes obsolete logs in the background: one may go between
    // the listing and its size (counted as gone).
    uintmax_t total = 0;
    std::error_code ec;
    for (const auto& e : fs::directory_iterator(dir_, ec)) {
      if (e.path().extension() != ".log") continue;
      const uintmax_t size = fs::file_size(e.path(), ec);
      if (!ec) total += size;
    }
    return total;
  };
  uintmax_t most = 0;
  for (int b = 0; b < kBatches; ++b) {
    std::vector<Document> docs;
    for (int i = 0; i < kPerBatch; ++i) {
      Document d = Doc(absl::StrCat("d", b * kPerBatch + i), 1);
      d.text = absl::StrCat(filler, b, "/", i);
      docs.push_back(std::move(d));
    }
    ASSERT_TRUE(store_->Upsert("c", std::move(docs)).ok());
    most = std::max(most, wal_bytes());
  }
  // The bound is 2 MiB; the slack covers a flush still writing when a file is
  // counted (each WAL file holds at most about one memtable, 256 KiB here).
  EXPECT_LE(most, uintmax_t{6} << 20) << "largest WAL total during the load";
  Reopen();
  EXPECT_EQ(*store_->Count("c"), uint64_t{kBatches * kPerBatch});
  auto last = store_->Get("c", absl::StrCat("d", kBatches * kPerBatch - 1));
  ASSERT_TRUE(last.ok()) << last.status();
  EXPECT_EQ(last->text.size(), filler.size() + absl::StrCat(kBatches - 1, "/", kPerBatch - 1).size());
}

}  // namespace
}  // namespace neodb::db
