// Backup and restore end to end: `neodb backup` (Admin.Backup) while a client
// streams documents in through Documents.Ingest, then `neodb restore` into a
// fresh directory and a server on it: every document acknowledged before the
// backup started is there, Verify passes, and search answers as the original
// did. A truncated or incomplete backup is refused and leaves the target
// untouched; export/import round-trips a collection.
#include <algorithm>
#include <atomic>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <random>
#include <thread>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "neodb/v1/neodb.grpc.pb.h"
#include "nlohmann/json.hpp"
#include "tests/integration/test_env.h"

namespace neodb::testing {
namespace {

namespace fs = std::filesystem;

std::chrono::system_clock::time_point Deadline(int seconds = 60) {
  return std::chrono::system_clock::now() + std::chrono::seconds(seconds);
}

std::vector<std::string> Args(const TestDir& dir, const std::string& data) {
  std::vector<std::string> a = {"--data-dir", data, "--backup-dir", dir.Sub("backups")};
  for (auto& x : ModelArgs(dir, 1)) a.push_back(x);
  return a;
}

void Create(ServerProcess& s, const std::string& name) {
  auto coll = v1::Collections::NewStub(s.Channel());
  grpc::ClientContext ctx;
  ctx.set_deadline(Deadline());
  v1::CreateCollectionRequest req;
  req.mutable_spec()->set_name(name);
  v1::CreateCollectionResponse resp;
  ASSERT_TRUE(coll->Create(&ctx, req, &resp).ok());
}

v1::VerifyResponse Verify(ServerProcess& s, const std::string& c) {
  auto admin = v1::Admin::NewStub(s.Channel());
  grpc::ClientContext ctx;
  ctx.set_deadline(Deadline());
  v1::VerifyRequest req;
  req.set_collection(c);
  v1::VerifyResponse r;
  EXPECT_TRUE(admin->Verify(&ctx, req, &r).ok());
  return r;
}

// NearText top 10 in `mode` ("" = the collection's default, hybrid).
std::vector<std::pair<std::string, float>> Search(ServerProcess& s, const std::string& c,
                                                  const std::string& q,
                                                  const std::string& mode = "") {
  auto search = v1::Search::NewStub(s.Channel());
  grpc::ClientContext ctx;
  ctx.set_deadline(Deadline());
  v1::NearTextRequest req;
  req.set_collection(c);
  req.set_query(q);
  req.set_k(10);
  req.set_mode(mode);
  v1::SearchResponse resp;
  EXPECT_TRUE(search->NearText(&ctx, req, &resp).ok());
  std::vector<std::pair<std::string, float>> out;
  for (const auto& h : resp.hits()) out.push_back({h.id(), h.score()});
  // Hits of equal score may come in either order (ties break by internal id,
  // which a restore renumbers): compare them in id order.
  std::stable_sort(out.begin(), out.end(), [](const auto& a, const auto& b) {
    return a.second > b.second || (a.second == b.second && a.first < b.first);
  });
  return out;
}

// How many of `ids` the server has.
size_t Present(ServerProcess& s, const std::string& c, const std::vector<std::string>& ids) {
  auto docs = v1::Documents::NewStub(s.Channel());
  size_t found = 0;
  for (size_t i = 0; i < ids.size(); i += 500) {
    grpc::ClientContext ctx;
    ctx.set_deadline(Deadline());
    v1::GetRequest req;
    req.set_collection(c);
    for (size_t j = i; j < std::min(ids.size(), i + 500); ++j) req.add_ids(ids[j]);
    v1::GetResponse resp;
    EXPECT_TRUE(docs->Get(&ctx, req, &resp).ok());
    for (const auto& d : resp.documents()) found += !d.id().empty();
  }
  return found;
}

// Truncates the largest file under `dir` to half its size.
void TruncateLargest(const std::string& dir) {
  fs::path largest;
  uintmax_t size = 0;
  for (const auto& e : fs::recursive_directory_iterator(dir)) {
    if (e.is_regular_file() && e.file_size() > size) {
      size = e.file_size();
      largest = e.path();
    }
  }
  ASSERT_GT(size, 1u);
  fs::resize_file(largest, size / 2);
}

TEST(BackupTest, BackupDuringStreamingIngestRestoresEveryAcknowledgedDocument) {
  TestDir dir("backup");
  fs::create_directories(dir.Sub("backups"));
  ServerProcess server(Args(dir, dir.Sub("data")));
  ASSERT_TRUE(server.Start());
  Create(server, "b");

  // The writer streams batches through Ingest; an ack for N documents means
  // the first N it sent are durable.
  std::mutex mu;
  std::vector<std::string> sent;
  size_t acked = 0;
  std::atomic<bool> stop{false};
  std::thread writer([&] {
    auto docs = v1::Documents::NewStub(server.Channel());
    grpc::ClientContext ctx;
    ctx.set_deadline(Deadline(300));
    auto stream = docs->Ingest(&ctx);
    std::mt19937_64 rng(7);
    for (int batch = 0; !stop.load() && batch < 2000; ++batch) {
      v1::IngestBatch b;
      b.set_collection("b");
      for (int i = 0; i < 10; ++i) {
        auto* d = b.add_documents();
        d->set_id(absl::StrCat("doc", batch, "_", i));
        d->set_text(RandomText(rng));
        std::lock_guard<std::mutex> l(mu);
        sent.push_back(d->id());
      }
      if (!stream->Write(b)) break;
      v1::IngestAck ack;
      if (!stream->Read(&ack)) break;
      std::lock_guard<std::mutex> l(mu);
      acked = ack.documents();
    }
    stream->WritesDone();
    EXPECT_TRUE(stream->Finish().ok());
  });
  // Stops and joins the writer on every way out of this test (an ASSERT included).
  struct Joiner {
    std::atomic<bool>* stop;
    std::thread* t;
    ~Joiner() {
      *stop = true;
      if (t->joinable()) t->join();
    }
  } joiner{&stop, &writer};
  auto acked_ids = [&] {
    std::lock_guard<std::mutex> l(mu);
    return std::vector<std::string>(sent.begin(), sent.begin() + acked);
  };
  auto wait_for = [&](size_t n) {
    for (int i = 0; i < 6000 && acked_ids().size() < n; ++i) {  // bounded: 120 s
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
  };
  wait_for(200);
  const std::vector<std::string> before = acked_ids();
  ASSERT_GE(before.size(), 200u);
  CommandResult r =
      RunNeodbCapture(absl::StrCat("backup --out b1 --server ", server.address()), dir.Sub(""));
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("\"models\":1"), std::string::npos) << r.out;
  // Writes go on after the backup.
  wait_for(before.size() + 100);
  stop = true;
  writer.join();
  EXPECT_GT(acked_ids().size(), before.size());

  // A second backup of the quiet server: the restored copy must answer
  // searches exactly as the original does.
  r = RunNeodbCapture(absl::StrCat("backup --out b2 --server ", server.address()), dir.Sub(""));
  ASSERT_EQ(r.status, 0) << r.err;
  const std::vector<std::string> queries = {"alpha bravo charlie", "river stone cloud",
                                            "north south east west"};
  std::vector<std::vector<std::pair<std::string, float>>> original;
  for (const auto& q : queries) original.push_back(Search(server, "b", q));
  // The vector leg alone too: its scores are the stored vectors' own, which a
  // copy embedded again matches only to rounding (below).
  const auto original_vector = Search(server, "b", queries[0], "vector");
  const size_t all = acked_ids().size();
  EXPECT_EQ(server.Stop(), 0);

  // Backups may not leave --backup-dir.
  {
    ServerProcess again(Args(dir, dir.Sub("data")));
    ASSERT_TRUE(again.Start());
    r = RunNeodbCapture(absl::StrCat("backup --out ../escape --server ", again.address()),
                        dir.Sub(""));
    EXPECT_NE(r.status, 0);
    EXPECT_NE(r.err.find("outside"), std::string::npos) << r.err;
    EXPECT_FALSE(fs::exists(dir.Sub("escape")));
    EXPECT_EQ(again.Stop(), 0);
  }

  // Restore b1 while the original model directory is gone: the restored
  // collection uses the model copy the backup carries.
  fs::rename(dir.Sub("model1"), dir.Sub("model1.moved"));
  r = RunNeodbCapture(
      absl::StrCat("restore --from ", dir.Sub("backups/b1"), " --data-dir ", dir.Sub("r1")),
      dir.Sub(""));
  ASSERT_EQ(r.status, 0) << r.err;
  fs::rename(dir.Sub("model1.moved"), dir.Sub("model1"));
  {
    ServerProcess restored(Args(dir, dir.Sub("r1")));
    ASSERT_TRUE(restored.Start());
    EXPECT_EQ(Present(restored, "b", before), before.size());
    v1::VerifyResponse v = Verify(restored, "b");
    EXPECT_EQ(v.missing_from_index(), 0u);
    EXPECT_EQ(v.stale_in_index(), 0u);
    EXPECT_EQ(v.foreign_model(), 0u);
    EXPECT_EQ(v.stored(), v.indexed());
    EXPECT_GE(v.stored(), before.size());
    EXPECT_EQ(restored.Stop(), 0);
  }
  r = RunNeodbCapture(
      absl::StrCat("restore --from ", dir.Sub("backups/b2"), " --data-dir ", dir.Sub("r2")),
      dir.Sub(""));
  ASSERT_EQ(r.status, 0) << r.err;
  {
    ServerProcess restored(Args(dir, dir.Sub("r2")));
    ASSERT_TRUE(restored.Start());
    EXPECT_EQ(Verify(restored, "b").stored(), all);
    for (size_t i = 0; i < queries.size(); ++i) {
      EXPECT_EQ(Search(restored, "b", queries[i]), original[i]) << queries[i];
    }
    // export, then import into a new collection: the same documents, and
    // their vectors taken as they are (the same model): nothing re-embedded.
    r = RunNeodbCapture(absl::StrCat("export --collection b --out ", dir.Sub("b.jsonl"),
                                     " --server ", restored.address()),
                        dir.Sub(""));
    ASSERT_EQ(r.status, 0) << r.err;
    {
      std::ifstream in(dir.Sub("b.jsonl"));
      std::string first;
      ASSERT_TRUE(std::getline(in, first));
      const nlohmann::json j = nlohmann::json::parse(first);
      EXPECT_TRUE(j.contains("vector")) << first;
      EXPECT_TRUE(j.value("vector_model_id", "").rfind("nb-", 0) == 0) << first;
    }
    Create(restored, "copy");
    r = RunNeodbCapture(absl::StrCat("import --collection copy ", dir.Sub("b.jsonl"), " --server ",
                                     restored.address()),
                        dir.Sub(""));
    ASSERT_EQ(r.status, 0) << r.err;
    EXPECT_EQ(nlohmann::json::parse(r.out).value("tokens", -1), 0) << r.out;
    EXPECT_EQ(Verify(restored, "copy").stored(), all);
    EXPECT_EQ(Verify(restored, "copy").foreign_model(), 0u);
    EXPECT_EQ(Search(restored, "copy", queries[0], "vector"), original_vector);
    // Hybrid too, score for score: the import numbers the documents in the
    // export's order, but ties at a leg's cut-off and in the fused ranking
    // break by document id (index/keyword/fusion.h), not by that number.
    for (size_t i = 0; i < queries.size(); ++i) {
      EXPECT_EQ(Search(restored, "copy", queries[i]), original[i]) << queries[i];
    }
    // Without vectors: the import embeds the texts, to the same ranking.
    r = RunNeodbCapture(absl::StrCat("export --no-vectors --collection b --out ",
                                     dir.Sub("b_text.jsonl"), " --server ", restored.address()),
                        dir.Sub(""));
    ASSERT_EQ(r.status, 0) << r.err;
    Create(restored, "embedded");
    r = RunNeodbCapture(absl::StrCat("import --collection embedded ", dir.Sub("b_text.jsonl"),
                                     " --server ", restored.address()),
                        dir.Sub(""));
    ASSERT_EQ(r.status, 0) << r.err;
    EXPECT_GT(nlohmann::json::parse(r.out).value("tokens", -1), 0) << r.out;
    EXPECT_EQ(Verify(restored, "embedded").stored(), all);
    // Embedded again, in other batches: the GEMMs may round differently, so
    // the scores agree to rounding, not to the bit.
    const auto again = Search(restored, "embedded", queries[0], "vector");
    ASSERT_EQ(again.size(), original_vector.size());
    for (size_t i = 0; i < again.size(); ++i) {
      EXPECT_NEAR(again[i].second, original_vector[i].second, 1e-4) << i;
    }
    if (again.size() > 1 && original_vector[0].second - original_vector[1].second > 1e-3f) {
      EXPECT_EQ(again[0].first, original_vector[0].first);
    }
    EXPECT_EQ(restored.Stop(), 0);
  }

  // A truncated backup: refused before anything is written.
  fs::copy(dir.Sub("backups/b1"), dir.Sub("broken"), fs::copy_options::recursive);
  TruncateLargest(dir.Sub("broken"));
  r = RunNeodbCapture(
      absl::StrCat("restore --from ", dir.Sub("broken"), " --data-dir ", dir.Sub("r3")),
      dir.Sub(""));
  EXPECT_NE(r.status, 0);
  EXPECT_NE(r.err.find("truncated"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(dir.Sub("r3")));
  for (const auto& e : fs::directory_iterator(dir.Sub(""))) {
    EXPECT_EQ(e.path().filename().string().find(".r3.restore"), std::string::npos);
  }
  // A changed byte (same size): the checksum catches it.
  fs::remove_all(dir.Sub("broken"));
  fs::copy(dir.Sub("backups/b1"), dir.Sub("broken"), fs::copy_options::recursive);
  {
    fs::path victim;
    for (const auto& e : fs::recursive_directory_iterator(dir.Sub("broken/store"))) {
      if (e.is_regular_file() && e.path().extension() == ".sst") victim = e.path();
    }
    ASSERT_FALSE(victim.empty());
    std::fstream f(victim, std::ios::in | std::ios::out | std::ios::binary);
    f.seekg(10);
    char c = 0;
    f.read(&c, 1);
    c = static_cast<char>(c ^ 0x5a);
    f.seekp(10);
    f.write(&c, 1);
  }
  r = RunNeodbCapture(
      absl::StrCat("restore --from ", dir.Sub("broken"), " --data-dir ", dir.Sub("r3")),
      dir.Sub(""));
  EXPECT_NE(r.status, 0);
  EXPECT_NE(r.err.find("SHA-256"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(dir.Sub("r3")));
  // No manifest: an incomplete backup.
  fs::remove(dir.Sub("broken/manifest.json"));
  r = RunNeodbCapture(
      absl::StrCat("restore --from ", dir.Sub("broken"), " --data-dir ", dir.Sub("r3")),
      dir.Sub(""));
  EXPECT_NE(r.status, 0);
  EXPECT_NE(r.err.find("not a complete backup"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(dir.Sub("r3")));
  // An existing target is never touched.
  fs::create_directories(dir.Sub("r4"));
  { std::ofstream(dir.Sub("r4/mine")) << "keep"; }
  r = RunNeodbCapture(
      absl::StrCat("restore --from ", dir.Sub("backups/b1"), " --data-dir ", dir.Sub("r4")),
      dir.Sub(""));
  EXPECT_NE(r.status, 0);
  EXPECT_TRUE(fs::exists(dir.Sub("r4/mine")));
  EXPECT_EQ(std::distance(fs::directory_iterator(dir.Sub("r4")), fs::directory_iterator()), 1);
}

}  // namespace
}  // namespace neodb::testing
