// `neodb adapt` end to end against a real `neodb serve` on a tiny random F16
// NeoBERT: mine, fine-tune (F16 in, F16 out, lineage.json), evaluate, refuse
// to apply below --min-gain, apply (kill -9 of the server in the middle of the
// swap: after the restart the collection is wholly on one model and Verify
// passes; the same command with --resume then finishes), `neodb models list`,
// and `neodb adapt --rollback` back to the original model.
#include <algorithm>
#include <atomic>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>
#include <map>
#include <memory>
#include <random>
#include <set>
#include <sstream>
#include <thread>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "neodb/v1/neodb.grpc.pb.h"
#include "nlohmann/json.hpp"
#include "tests/integration/adapt_test_util.h"
#include "tests/integration/test_env.h"

namespace neodb::testing {
namespace {

TEST(AdaptTest, MineTrainEvaluateApplyThroughAKillAndRollBack) {
#ifndef NEODB_HAVE_ENCODER
  GTEST_SKIP() << "neodb adapt needs the encoder";
#endif
  TestDir dir("adapt");
  ModelArgs(dir, 1);  // writes vocab.txt
  const std::string model = dir.Sub("model_f16");
  ASSERT_EQ(RunNeodb(absl::StrCat("model init --preset tiny --seed 3 --dtype f16 --vocab ",
                                  dir.Sub("vocab.txt"), " --out ", model)),
            0);
  // The server may load any model under the test's directory (adapt's output included).
  const std::vector<std::string> serve = {"--data-dir", dir.Sub("data"), "--model",
                                          model,        "--models-dir",  dir.Sub("")};
  std::vector<std::string> slow = serve;
  for (const char* a : {"--test-encoder-delay-ms", "50", "--test-reindex-commit-delay-ms", "300"}) {
    slow.push_back(a);
  }
  std::vector<std::string> texts;
  std::string old_id;
  const std::string out = dir.Sub("adapted");
  const std::string pairs = dir.Sub("pairs.jsonl");
  {
    ServerProcess server(serve);
    ASSERT_TRUE(server.Start());
    Admin c(server);
    c.CreateWithDocs("c", &texts);
    old_id = c.Describe("c").model_id();
    EXPECT_EQ(c.Describe("c").model_dir(), model);
    WritePrefixPairs(texts, pairs);
    const std::string common =
        absl::StrCat("adapt --collection c --pairs ", pairs, " --server ", server.address(),
                     " --eval-split 0.25 --steps 4 --batch-size 8 --negatives 2 --out ", out);
    // A gain above 2 is impossible for nDCG: trained, measured, not applied.
    CommandResult r = RunNeodbCapture(common + " --apply --min-gain 2", dir.Sub(""));
    ASSERT_EQ(r.status, 0) << r.err;
    EXPECT_NE(r.out.find("hybrid   new"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("not applied"), std::string::npos) << r.out;
    EXPECT_EQ(c.Describe("c").model_id(), old_id);
    // F16 in, F16 out; lineage names the parent and the mined negatives.
    EXPECT_EQ(ReadJsonFile(out + "/config.json").value("torch_dtype", ""), "float16");
    const nlohmann::json lineage = ReadJsonFile(out + "/lineage.json");
    EXPECT_EQ(lineage["parent"].value("model_id", ""), old_id);
    EXPECT_EQ(lineage.value("negatives", ""), "mined:2");
    EXPECT_EQ(lineage.value("steps", 0), 4);
    const nlohmann::json mining = ReadJsonFile(out + ".adapt/mining.json");
    EXPECT_EQ(mining.value("queries", 0), kQueries - kQueries / 4);
    EXPECT_EQ(mining.value("negatives", 0), 2 * (kQueries - kQueries / 4));
    const nlohmann::json record = ReadJsonFile(out + "/adapt.json");
    EXPECT_EQ(record["previous"].value("model_id", ""), old_id);
    EXPECT_FALSE(record.value("applied", true));
    // Each held-out query's figures, and their paired difference: the means of
    // the lines are the table's figures, their difference the record's.
    std::ifstream per_query(out + "/adapt_queries.jsonl");
    std::string line;
    int lines = 0;
    std::map<std::string, double> sum;
    while (std::getline(per_query, line)) {
      const nlohmann::json q = nlohmann::json::parse(line);
      ++lines;
      EXPECT_EQ(q.value("set", ""), "held_out");
      EXPECT_FALSE(q.value("query", "").empty());
      EXPECT_FALSE(q["relevant"].empty());
      for (const char* model : {"old", "new"}) {
        for (const char* mode : {"vector", "hybrid"}) {
          const double v = q[model].value(mode, -1.0);
          EXPECT_GE(v, 0);
          EXPECT_LE(v, 1);
          sum[absl::StrCat(model, ".", mode)] += v;
        }
      }
    }
    EXPECT_EQ(lines, kQueries / 4);
    const nlohmann::json& vec = record["differences"]["held_out"]["vector"];
    EXPECT_EQ(vec.value("queries", 0), kQueries / 4);
    EXPECT_NEAR(sum["old.vector"] / lines, record["before"]["vector"].value("ndcg@10", -1.0), 1e-9);
    EXPECT_NEAR(sum["new.vector"] / lines, record["after"]["vector"].value("ndcg@10", -1.0), 1e-9);
    EXPECT_NEAR(vec.value("mean", -9.0), (sum["new.vector"] - sum["old.vector"]) / lines, 1e-9);
    EXPECT_LE(vec.value("low95", 9.0), vec.value("mean", -9.0));
    EXPECT_GE(vec.value("high95", -9.0), vec.value("mean", 9.0));
    const nlohmann::json& hyb = record["differences"]["held_out"]["hybrid"];
    EXPECT_NEAR(sum["old.hybrid"] / lines, record["before"]["hybrid"].value("ndcg@10", -1.0), 1e-9);
    EXPECT_NEAR(sum["new.hybrid"] / lines,
                record["after"]["hybrid_best_fusion"].value("ndcg@10", -1.0), 1e-9);
    EXPECT_NEAR(hyb.value("mean", -9.0), record.value("gain", 9.0), 1e-9);
    EXPECT_NE(r.out.find("paired over the same"), std::string::npos) << r.out;
    EXPECT_EQ(server.Stop(), 0);
  }
  const std::string new_id = ReadJsonFile(out + "/lineage.json").value("model_id", "");
  ASSERT_FALSE(new_id.empty());
  ASSERT_NE(new_id, old_id);
  {
    // Apply (any gain accepted), and kill -9 the server while the swap runs.
    ServerProcess server(slow);
    ASSERT_TRUE(server.Start());
    Admin c(server);
    const std::string cmd =
        absl::StrCat("adapt --collection c --pairs ", pairs, " --server ", server.address(),
                     " --eval-split 0.25 --steps 4 --batch-size 8 --negatives 2 --out ", out,
                     " --resume --apply --min-gain -2");
    CommandResult r;
    std::atomic<bool> adapt_done{false};
    std::thread adapt([&] {
      r = RunNeodbCapture(cmd, dir.Sub(""));
      adapt_done = true;
    });
    v1::ReindexStatusResponse st;
    const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(300);
    do {
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
      st = c.Status("c");
    } while (!(st.state() == v1::ReindexStatusResponse::RUNNING && st.done() > 0) && !adapt_done &&
             std::chrono::steady_clock::now() < until);
    if (st.state() != v1::ReindexStatusResponse::RUNNING) {  // never reached the swap
      server.Kill();
      adapt.join();
    }
    ASSERT_EQ(st.state(), v1::ReindexStatusResponse::RUNNING) << r.err;
    server.Kill();
    adapt.join();
    EXPECT_NE(r.status, 0) << r.out;  // its server went away mid-swap
  }
  {
    ServerProcess server(serve);
    ASSERT_TRUE(server.Start());
    Admin c(server);
    const std::string now = c.Describe("c").model_id();
    EXPECT_TRUE(now == old_id || now == new_id) << now;
    c.ExpectWhole("c", now);
    // The same command finishes the job.
    CommandResult r = RunNeodbCapture(
        absl::StrCat("adapt --collection c --pairs ", pairs, " --server ", server.address(),
                     " --eval-split 0.25 --steps 4 --batch-size 8 --negatives 2 --out ", out,
                     " --resume --apply --min-gain -2"),
        dir.Sub(""));
    ASSERT_EQ(r.status, 0) << r.err;
    EXPECT_NE(r.out.find("applied: c is on " + new_id), std::string::npos) << r.out;
    c.ExpectWhole("c", new_id);
    const nlohmann::json applied = ReadJsonFile(out + "/adapt.json");
    EXPECT_TRUE(applied.value("applied", false));
    // The collection now fuses as adapt calibrated it on the held-out pairs
    // (whichever fusion that was), and the record keeps the one it had.
    EXPECT_EQ(c.Describe("c").spec().fusion(), applied["fusion"].value("method", ""));
    if (applied["fusion"].value("method", "") == "weighted") {
      EXPECT_EQ(c.Describe("c").spec().fusion_alpha(), applied["fusion"].value("alpha", -1.0));
    }
    EXPECT_EQ(applied["previous"].value("fusion", ""), "weighted");
    EXPECT_EQ(applied["previous"].value("fusion_alpha", -1.0), 0.9);

    // The registry view: the new model, its parent, its collection.
    r = RunNeodbCapture(absl::StrCat("models list --server ", server.address()), dir.Sub(""));
    ASSERT_EQ(r.status, 0) << r.err;
    bool seen_new = false, seen_old = false;
    std::istringstream lines(r.out);
    for (std::string line; std::getline(lines, line);) {
      const nlohmann::json m = nlohmann::json::parse(line);
      if (m.value("model_id", "") == new_id) {
        seen_new = true;
        EXPECT_EQ(m["collections"], nlohmann::json::array({"c"}));
        EXPECT_EQ(m["lineage"]["parent"].value("model_id", ""), old_id);
        EXPECT_EQ(m.value("default", true), false);
      }
      if (m.value("model_id", "") == old_id) {
        seen_old = true;
        EXPECT_TRUE(m.value("default", false));
        EXPECT_TRUE(m["collections"].empty());
      }
    }
    EXPECT_TRUE(seen_new && seen_old) << r.out;

    // Roll back; a second rollback has nothing to go back to.
    r = RunNeodbCapture(absl::StrCat("adapt --rollback c --server ", server.address()),
                        dir.Sub(""));
    ASSERT_EQ(r.status, 0) << r.err;
    c.ExpectWhole("c", old_id);
    EXPECT_EQ(c.Describe("c").model_dir(), model);
    EXPECT_EQ(c.Describe("c").spec().fusion(), "weighted");
    EXPECT_EQ(c.Describe("c").spec().fusion_alpha(), 0.9);
    r = RunNeodbCapture(absl::StrCat("adapt --rollback c --server ", server.address()),
                        dir.Sub(""));
    EXPECT_NE(r.status, 0);
    EXPECT_NE(r.err.find("nothing to roll back to"), std::string::npos) << r.err;
    EXPECT_EQ(server.Stop(), 0);
  }
}

// A server on a tiny model (any model under `dir` allowed) with collection
// "c" of kDocs documents, and the prefix pairs in dir/pairs.jsonl; `old_id`
// is c's model id. What the option tests below start from.
void StartCollectionWithPairs(TestDir& dir, std::unique_ptr<ServerProcess>* server,
                              std::string* old_id) {
  *server = std::make_unique<ServerProcess>(std::vector<std::string>{
      "--data-dir", dir.Sub("data"), "--model", ModelDir(dir, 1), "--models-dir", dir.Sub("")});
  ASSERT_TRUE((*server)->Start());
  Admin c(**server);
  std::vector<std::string> texts;
  c.CreateWithDocs("c", &texts);
  *old_id = c.Describe("c").model_id();
  WritePrefixPairs(texts, dir.Sub("pairs.jsonl"));
}

TEST(AdaptTest, RoundsMineAgainFromTheModelTheRoundBeforeTrained) {
#ifndef NEODB_HAVE_ENCODER
  GTEST_SKIP() << "neodb adapt needs the encoder";
#endif
  TestDir dir("adapt_rounds");
  std::unique_ptr<ServerProcess> server;
  std::string old_id;
  ASSERT_NO_FATAL_FAILURE(StartCollectionWithPairs(dir, &server, &old_id));
  const std::string out = dir.Sub("adapted");
  const std::string base =
      absl::StrCat("adapt --collection c --pairs ", dir.Sub("pairs.jsonl"), " --server ",
                   server->address(), " --eval-split 0.25 --steps 5 --batch-size 8 --out ", out);
  // Refused before anything is written: rounds without mining, or out of range.
  CommandResult r = RunNeodbCapture(base + " --rounds 2 --negatives 0", dir.Sub(""));
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("--rounds > 1 mines again each round"), std::string::npos) << r.err;
  r = RunNeodbCapture(base + " --rounds 0", dir.Sub(""));
  EXPECT_EQ(r.status, 2);
  r = RunNeodbCapture(base + " --negatives 0 --negative-pool 3", dir.Sub(""));
  EXPECT_EQ(r.status, 2);
  EXPECT_FALSE(std::filesystem::exists(out));

  r = RunNeodbCapture(base + " --rounds 2 --negatives 1 --negative-pool 3", dir.Sub(""));
  ASSERT_EQ(r.status, 0) << r.err;
  const int train_queries = kQueries - kQueries / 4;
  // Round 1 mined from the server, round 2 from round 1's model; each mined a
  // pool of 3 per query, of which each step draws 1.
  const nlohmann::json m1 = ReadJsonFile(out + ".adapt/mining.json");
  const nlohmann::json m2 = ReadJsonFile(out + ".adapt/mining.round2.json");
  EXPECT_EQ(m1.value("vector_leg", ""), "vector");
  EXPECT_EQ(m2.value("vector_leg", ""), "round 1's model");
  EXPECT_EQ(m1.value("negatives", 0), 3 * train_queries);
  EXPECT_EQ(m2.value("negatives", 0), 3 * train_queries);
  // The steps are shared (2 + 3), and the lineage is a chain: the collection's
  // model, round 1's, the final one.
  const nlohmann::json l1 = ReadJsonFile(out + ".adapt/round1/lineage.json");
  const nlohmann::json l2 = ReadJsonFile(out + "/lineage.json");
  EXPECT_EQ(l1.value("steps", 0), 2);
  EXPECT_EQ(l2.value("steps", 0), 3);
  EXPECT_EQ(l1["parent"].value("model_id", ""), old_id);
  EXPECT_EQ(l2["parent"].value("model_id", ""), l1.value("model_id", ""));
  EXPECT_EQ(l2.value("negatives", ""), "mined:1-of-3");
  EXPECT_EQ(l2["adapt"].value("round", 0), 2);
  EXPECT_NE(r.out.find("hybrid   new"), std::string::npos) << r.out;
  // --rollback's record names the collection's model, not round 1's.
  EXPECT_EQ(ReadJsonFile(out + "/adapt.json")["previous"].value("model_id", ""), old_id);
  EXPECT_EQ(server->Stop(), 0);
}

TEST(AdaptTest, ScoreRulePassesOverCandidatesTheModelRanksLikeAPositive) {
#ifndef NEODB_HAVE_ENCODER
  GTEST_SKIP() << "neodb adapt needs the encoder";
#endif
  TestDir dir("adapt_score_rule");
  std::unique_ptr<ServerProcess> server;
  std::string old_id;
  ASSERT_NO_FATAL_FAILURE(StartCollectionWithPairs(dir, &server, &old_id));
  const std::string base =
      absl::StrCat("adapt --collection c --pairs ", dir.Sub("pairs.jsonl"), " --server ",
                   server->address(), " --eval-split 0.25 --steps 2 --batch-size 8 --negatives 1");
  CommandResult r = RunNeodbCapture(base + " --mine-max-score-ratio -0.5", dir.Sub(""));
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("--mine-max-score-ratio must be in [0, 10]"), std::string::npos) << r.err;
  r = RunNeodbCapture(base + " --mine-max-score-ratio nan", dir.Sub(""));
  EXPECT_NE(r.status, 0);
  const int train_queries = kQueries - kQueries / 4;
  // Ratio 10 lets every candidate through (a cosine is at most 1, and a
  // positive's well above 0.1 here): as many negatives as without the rule,
  // but mined in process.
  const std::string loose = dir.Sub("loose");
  r = RunNeodbCapture(base + " --mine-max-score-ratio 10 --out " + loose, dir.Sub(""));
  ASSERT_EQ(r.status, 0) << r.err;
  const nlohmann::json m_loose = ReadJsonFile(loose + ".adapt/mining.json");
  EXPECT_EQ(m_loose.value("vector_leg", ""), "vector (in process)");
  EXPECT_EQ(m_loose.value("negatives", 0), train_queries);
  EXPECT_EQ(m_loose.value("passed_over_by_score", -1), 0) << m_loose.dump();
  // The current model's vectors are the server's stored ones: neither round
  // 1's mining nor the evaluation of the old model embeds the collection.
  const nlohmann::json rec_loose = ReadJsonFile(loose + "/adapt.json");
  EXPECT_EQ(rec_loose.value("old_model_documents", ""), "the server's stored vectors");
  EXPECT_NE(r.err.find("old model: the server's stored vectors ("), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find("embedding the collection with the current model"), std::string::npos)
      << r.err;
  EXPECT_EQ(r.err.find("embedding the collection with the old model"), std::string::npos) << r.err;
  // With --embed-old adapt embeds them itself: round 1 embeds the collection
  // and the evaluation takes those vectors, and scores the old model exactly
  // as a run that embeds it in the evaluation (mined from the server, no
  // in-process model) does.
  const std::string loose_embedded = dir.Sub("loose_embedded");
  r = RunNeodbCapture(base + " --embed-old --mine-max-score-ratio 10 --out " + loose_embedded,
                      dir.Sub(""));
  ASSERT_EQ(r.status, 0) << r.err;
  const nlohmann::json rec_loose_embedded = ReadJsonFile(loose_embedded + "/adapt.json");
  EXPECT_EQ(rec_loose_embedded.value("old_model_documents", ""), "reused from round 1's mining");
  const std::string plain = dir.Sub("plain");
  r = RunNeodbCapture(base + " --embed-old --out " + plain, dir.Sub(""));
  ASSERT_EQ(r.status, 0) << r.err;
  const nlohmann::json rec_plain = ReadJsonFile(plain + "/adapt.json");
  EXPECT_EQ(rec_plain.value("old_model_documents", ""), "embedded");
  EXPECT_EQ(rec_loose_embedded["before"].dump(), rec_plain["before"].dump());
  // The stored vectors are what adapt embeds, up to rounding: the server
  // embedded them in its own batches, so two rounding-tied documents may
  // swap, which moves one query's nDCG@10 by at most 1 - 1/log2(3).
  for (const char* mode : {"vector", "hybrid"}) {
    const nlohmann::json& stored_m = rec_loose["before"][mode];
    EXPECT_NEAR(stored_m.value("ndcg@10", -1.0), rec_plain["before"][mode].value("ndcg@10", -2.0),
                (1 - 1 / std::log2(3.0)) / stored_m.value("queries", 1.0) + 1e-9)
        << mode;
  }
  // The saved vectors go once the run is done (they are as large as the index).
  EXPECT_FALSE(std::filesystem::exists(loose + ".adapt/old_model_vectors.bin"));
  EXPECT_FALSE(std::filesystem::exists(loose_embedded + ".adapt/old_model_vectors.bin"));
  // A run that stops after mining (here its fine-tune cannot create its work
  // directory) keeps them, and the same command with --resume evaluates the
  // old model on them rather than embedding the collection again.
  const std::string resumed = dir.Sub("resumed");
  std::ofstream(resumed + ".work") << "in the way\n";
  const std::string embedded_base = base + " --embed-old --mine-max-score-ratio 10";
  r = RunNeodbCapture(embedded_base + " --checkpoint-every 1 --out " + resumed, dir.Sub(""));
  ASSERT_NE(r.status, 0) << r.err;
  EXPECT_TRUE(std::filesystem::exists(resumed + ".adapt/old_model_vectors.bin"));
  std::filesystem::remove(resumed + ".work");
  r = RunNeodbCapture(embedded_base + " --resume --out " + resumed, dir.Sub(""));
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.err.find("resuming: reusing"), std::string::npos) << r.err;
  const nlohmann::json rec_resumed = ReadJsonFile(resumed + "/adapt.json");
  EXPECT_EQ(rec_resumed.value("old_model_documents", ""), "reused from round 1's mining");
  EXPECT_EQ(rec_resumed["before"].dump(), rec_plain["before"].dump());
  EXPECT_FALSE(std::filesystem::exists(resumed + ".adapt/old_model_vectors.bin"));
  // A tiny ratio passes over every candidate scoring above ~0: fewer
  // negatives, each passed-over one counted, and the lineage records it.
  const std::string tight = dir.Sub("tight");
  r = RunNeodbCapture(base + " --mine-max-score-ratio 0.001 --out " + tight, dir.Sub(""));
  ASSERT_EQ(r.status, 0) << r.err;
  const nlohmann::json m_tight = ReadJsonFile(tight + ".adapt/mining.json");
  EXPECT_LT(m_tight.value("negatives", 0), train_queries);
  EXPECT_GT(m_tight.value("passed_over_by_score", 0), 0);
  EXPECT_DOUBLE_EQ(
      ReadJsonFile(tight + "/lineage.json")["adapt"].value("mine_max_score_ratio", 0.0), 0.001);
  EXPECT_EQ(server->Stop(), 0);
}

// Each query's nDCG@10 with binary gains of the server's own search (NearText
// in `mode`) for the pairs of a {"query", "positive_id"} file.
std::map<std::string, double> ServedNdcgPerQuery(ServerProcess& server,
                                                 const std::string& collection,
                                                 const std::string& pairs_file,
                                                 const std::string& mode) {
  std::map<std::string, std::set<std::string>> relevant;
  std::ifstream in(pairs_file);
  for (std::string line; std::getline(in, line);) {
    const nlohmann::json p = nlohmann::json::parse(line);
    relevant[p["query"].get<std::string>()].insert(p["positive_id"].get<std::string>());
  }
  EXPECT_FALSE(relevant.empty()) << pairs_file;
  auto search = v1::Search::NewStub(server.Channel());
  std::map<std::string, double> ndcg;
  for (const auto& [query, ids] : relevant) {
    grpc::ClientContext ctx;
    ctx.set_deadline(Deadline());
    v1::NearTextRequest req;
    req.set_collection(collection);
    req.set_query(query);
    req.set_k(10);
    req.set_mode(mode);
    v1::SearchResponse resp;
    const grpc::Status s = search->NearText(&ctx, req, &resp);
    EXPECT_TRUE(s.ok()) << s.error_message();
    double dcg = 0, ideal = 0;
    for (int r = 0; r < resp.hits_size(); ++r) {
      if (ids.contains(resp.hits(r).id())) dcg += 1 / std::log2(r + 2.0);
    }
    for (size_t r = 0; r < std::min<size_t>(ids.size(), 10); ++r) ideal += 1 / std::log2(r + 2.0);
    ndcg[query] = dcg / ideal;
  }
  return ndcg;
}

// Their mean.
double ServedNdcg(ServerProcess& server, const std::string& collection,
                  const std::string& pairs_file, const std::string& mode) {
  const std::map<std::string, double> ndcg =
      ServedNdcgPerQuery(server, collection, pairs_file, mode);
  double sum = 0;
  for (const auto& [query, v] : ndcg) sum += v;
  return ndcg.empty() ? 0 : sum / static_cast<double>(ndcg.size());
}

TEST(AdaptTest, KeywordLegIsTheCollectionsOwn) {
#ifndef NEODB_HAVE_ENCODER
  GTEST_SKIP() << "neodb adapt needs the encoder";
#endif
  TestDir dir("adapt_keyword");
  ServerProcess server(
      {"--data-dir", dir.Sub("data"), "--model", ModelDir(dir, 1), "--models-dir", dir.Sub("")});
  ASSERT_TRUE(server.Start());
  Admin c(server);
  std::vector<std::string> texts;
  // Not the default keyword index: texts as written, other BM25 parameters,
  // and a title field at weight 3 that holds the first four words of the
  // next document, the very words of that document's query.
  c.CreateWithDocs("k", &texts, [](v1::CollectionSpec* spec, v1::UpsertRequest* u) {
    if (spec != nullptr) {
      spec->set_metric(v1::METRIC_INNER_PRODUCT);
      spec->set_analyzer("none");
      spec->set_bm25_k1(1.7);
      spec->set_bm25_b(0.6);
      spec->set_title_field("title");
      spec->set_title_weight(3);
      return;
    }
    for (int i = 0; i + 1 < u->documents_size(); ++i) {
      const std::string& next = u->documents(i + 1).text();
      size_t cut = 0;
      for (int w = 0; w < 4; ++w) cut = next.find(' ', cut + 1);
      (*u->mutable_documents(i)->mutable_metadata())["title"].set_string_value(next.substr(0, cut));
    }
  });
  const std::string pairs = dir.Sub("pairs.jsonl");
  WritePrefixPairs(texts, pairs);
  const std::string out = dir.Sub("adapted");
  CommandResult r = RunNeodbCapture(
      absl::StrCat("adapt --collection k --pairs ", pairs, " --server ", server.address(),
                   " --eval-split 0.25 --steps 1 --batch-size 8 --negatives 1"
                   " --mine-from keyword --out ",
                   out),
      dir.Sub(""));
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.err.find("analyzer none, BM25 k1 1.7 b 0.6, title field \"title\" at weight 3"),
            std::string::npos)
      << r.err;
  // adapt's keyword mode is the server's, query for query: the same nDCG@10.
  // The titles move the server's ranking well away from a default index's,
  // which would put nearly every query's own document first.
  const double served = ServedNdcg(server, "k", out + ".adapt/held_out.jsonl", "keyword");
  EXPECT_LT(served, 0.9);
  const nlohmann::json record = ReadJsonFile(out + "/adapt.json");
  EXPECT_NEAR(record["keyword"].value("ndcg@10", -1.0), served, 1e-9) << record.dump();
  // So are its vector and hybrid modes for the current model, under the
  // collection's metric (inner product here, on vectors the model does not
  // normalise) and fusion. The server embeds and searches by its own batches
  // and BLAS calls, so two documents whose scores tie to rounding may swap:
  // one such swap moves one query's nDCG@10 by at most 1 - 1/log2(3).
  const nlohmann::json& before = record["before"];
  const double one_swap = (1 - 1 / std::log2(3.0)) / before["vector"].value("queries", 1.0) + 1e-9;
  EXPECT_NEAR(before["vector"].value("ndcg@10", -1.0),
              ServedNdcg(server, "k", out + ".adapt/held_out.jsonl", "vector"), one_swap);
  EXPECT_NEAR(before["hybrid"].value("ndcg@10", -1.0),
              ServedNdcg(server, "k", out + ".adapt/held_out.jsonl", "hybrid"), one_swap);
  EXPECT_EQ(server.Stop(), 0);
}

// Ties: 20 groups of 15 documents with one text each, written in id-number
// order (d0, d1, ..., not the byte order the listing and the server's tie rule
// use), and queries that each of a group's documents matches equally. adapt's
// keyword mode still ranks every held-out query as the server does: both break
// BM25 ties by document id (index/keyword/fusion.h), so it is the same
// nDCG@10, though a group's documents cross the top 10.
TEST(AdaptTest, KeywordLegBreaksTiesAsTheServerDoes) {
#ifndef NEODB_HAVE_ENCODER
  GTEST_SKIP() << "neodb adapt needs the encoder";
#endif
  TestDir dir("adapt_ties");
  ServerProcess server(
      {"--data-dir", dir.Sub("data"), "--model", ModelDir(dir, 1), "--models-dir", dir.Sub("")});
  ASSERT_TRUE(server.Start());
  Admin c(server);
  std::vector<std::string> texts, group_text;
  std::mt19937_64 rng(3);
  for (int g = 0; g < 20; ++g) group_text.push_back(RandomText(rng, 12));
  c.CreateWithDocs("t", &texts, [&](v1::CollectionSpec*, v1::UpsertRequest* u) {
    if (u == nullptr) return;
    for (int i = 0; i < u->documents_size(); ++i) {
      u->mutable_documents(i)->set_text(group_text[i % 20]);
    }
  });
  // Two queries a group (its first four words, its next four), the positive
  // the group's eighth document in number order (d140 + g).
  const std::string pairs = dir.Sub("pairs.jsonl");
  {
    std::ofstream p(pairs);
    for (int g = 0; g < 20; ++g) {
      std::istringstream words(group_text[g]);
      std::vector<std::string> w{std::istream_iterator<std::string>(words), {}};
      for (int h = 0; h < 2; ++h) {
        const std::string query =
            absl::StrCat(w[4 * h], " ", w[4 * h + 1], " ", w[4 * h + 2], " ", w[4 * h + 3]);
        p << nlohmann::json{{"query", query}, {"positive_id", absl::StrCat("d", 140 + g)}}.dump()
          << "\n";
      }
    }
  }
  const std::string out = dir.Sub("adapted");
  CommandResult r = RunNeodbCapture(
      absl::StrCat("adapt --collection t --pairs ", pairs, " --server ", server.address(),
                   " --eval-split 0.5 --steps 1 --batch-size 8 --negatives 1"
                   " --mine-from keyword --out ",
                   out),
      dir.Sub(""));
  ASSERT_EQ(r.status, 0) << r.err;
  const std::map<std::string, double> served =
      ServedNdcgPerQuery(server, "t", out + ".adapt/held_out.jsonl", "keyword");
  double sum = 0;
  int partial = 0;  // queries whose positive is ranked, not first: the tie order shows
  for (const auto& [query, v] : served) {
    sum += v;
    partial += v > 0 && v < 1;
  }
  EXPECT_GT(partial, 0);
  const nlohmann::json record = ReadJsonFile(out + "/adapt.json");
  EXPECT_NEAR(record["keyword"].value("ndcg@10", -1.0), sum / static_cast<double>(served.size()),
              1e-9)
      << record.dump();
  EXPECT_EQ(server.Stop(), 0);
}

// A collection computed in bf16 or int8: adapt reads the collection's
// precision and embeds the new model in it, and what it measured before
// --apply is what the collection serves after it, query by query. (On a CPU
// without the precision's instructions the server reports, and adapt runs,
// f32.) The per-query figures alone would not catch adapt embedding in f32:
// on this tiny model f32, bf16 and int8 rank the held-out positives alike
// (checked by forcing f32 in adapt: the same figures), so the precision
// adapt reports is checked as well.
TEST(AdaptTest, NewModelIsMeasuredInTheCollectionsPrecision) {
#ifndef NEODB_HAVE_ENCODER
  GTEST_SKIP() << "neodb adapt needs the encoder";
#endif
  for (const char* precision : {"bf16", "int8"}) {
    SCOPED_TRACE(precision);
    TestDir dir(absl::StrCat("adapt_precision_", precision));
    ServerProcess server(
        {"--data-dir", dir.Sub("data"), "--model", ModelDir(dir, 1), "--models-dir", dir.Sub("")});
    ASSERT_TRUE(server.Start());
    Admin c(server);
    std::vector<std::string> texts;
    c.CreateWithDocs("p", &texts, [&](v1::CollectionSpec* spec, v1::UpsertRequest*) {
      if (spec != nullptr) spec->set_precision(precision);
    });
    const std::string served_precision = c.Describe("p").spec().precision();
    // Two words from the middle of a document: its positive then ranks
    // anywhere, not first, so the figures compared below are not all 1.
    const std::string pairs = dir.Sub("pairs.jsonl");
    {
      std::ofstream p(pairs);
      for (int i = 0; i < kQueries; ++i) {
        std::istringstream words(texts[i * 7]);
        std::vector<std::string> w{std::istream_iterator<std::string>(words), {}};
        ASSERT_GE(w.size(), 8u);
        p << nlohmann::json{{"query", w[5] + " " + w[6]}, {"positive_id", absl::StrCat("d", i * 7)}}
                 .dump()
          << "\n";
      }
    }
    const std::string out = dir.Sub("adapted");
    CommandResult r = RunNeodbCapture(
        absl::StrCat("adapt --collection p --pairs ", pairs, " --server ", server.address(),
                     " --eval-split 0.5 --steps 2 --batch-size 8 --negatives 1 --apply"
                     " --min-gain -2 --out ",
                     out),
        dir.Sub(""));
    ASSERT_EQ(r.status, 0) << r.err;
    EXPECT_NE(r.err.find(", " + served_precision + "\n"), std::string::npos) << r.err;
    ASSERT_TRUE(ReadJsonFile(out + "/adapt.json").value("applied", false));
    EXPECT_EQ(c.Describe("p").spec().precision(), served_precision);
    // adapt's figure for each held-out query against the server's. The server
    // embeds in its own batches, so rounding-tied documents may swap: allow
    // one swap in the whole set, which moves one query's nDCG@10 by at most
    // 1 - 1/log2(3).
    const std::string held_out = out + ".adapt/held_out.jsonl";
    for (const char* mode : {"vector", "hybrid"}) {
      SCOPED_TRACE(mode);
      const std::map<std::string, double> served = ServedNdcgPerQuery(server, "p", held_out, mode);
      std::ifstream lines(out + "/adapt_queries.jsonl");
      double total_difference = 0;
      int queries = 0;
      for (std::string line; std::getline(lines, line);) {
        const nlohmann::json q = nlohmann::json::parse(line);
        const double adapt_ndcg = q["new"].value(mode, -1.0);
        ASSERT_TRUE(served.contains(q.value("query", ""))) << line;
        total_difference += std::abs(adapt_ndcg - served.at(q.value("query", "")));
        ++queries;
      }
      EXPECT_EQ(queries, kQueries / 2);
      EXPECT_LE(total_difference, 1 - 1 / std::log2(3.0) + 1e-9);
    }
    EXPECT_EQ(server.Stop(), 0);
  }
}

TEST(AdaptTest, HostileInputsGetClearErrors) {
#ifndef NEODB_HAVE_ENCODER
  GTEST_SKIP() << "neodb adapt needs the encoder";
#endif
  TestDir dir("adapt_bad");
  ServerProcess server({"--data-dir", dir.Sub("data"), "--model", ModelDir(dir, 1)});
  ASSERT_TRUE(server.Start());
  Admin c(server);
  std::vector<std::string> texts;
  c.CreateWithDocs("c", &texts);
  const std::string pairs = dir.Sub("bad.jsonl");
  std::ofstream(pairs) << "{\"query\":\"a\",\"positive_id\":\"d1\"}\n"
                       << "{\"query\":\"b\",\"positive_id\":\"nope\"}\n";
  const std::string base =
      absl::StrCat("adapt --server ", server.address(), " --out ", dir.Sub("o"), " --collection ");
  CommandResult r = RunNeodbCapture(base + "c --pairs " + pairs, dir.Sub(""));
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("bad.jsonl:2: positive_id \"nope\" is not a document"), std::string::npos)
      << r.err;
  r = RunNeodbCapture(base + "missing --pairs " + pairs, dir.Sub(""));
  EXPECT_NE(r.status, 0);
  EXPECT_NE(r.err.find("missing"), std::string::npos) << r.err;
  r = RunNeodbCapture(base + "c --pairs " + dir.Sub("none.jsonl"), dir.Sub(""));
  EXPECT_NE(r.status, 0);
  EXPECT_NE(r.err.find("cannot open pair file"), std::string::npos) << r.err;
  for (const char* flag : {" --temperature 0", " --temperature nan", " --lr -1"}) {
    r = RunNeodbCapture(base + "c --pairs " + pairs + flag, dir.Sub(""));
    EXPECT_EQ(r.status, 2) << flag;
    EXPECT_NE(r.err.find("must be a positive number"), std::string::npos) << flag << r.err;
  }
  std::ofstream(pairs) << "{\"query\":\"a\",\"positive_id\":\"d1\"}\n";
  r = RunNeodbCapture(base + "c --pairs " + pairs, dir.Sub(""));  // one query: no split
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("at least 2 distinct queries"), std::string::npos) << r.err;
  // A collection of the client's own vectors has no model here to fine-tune.
  ASSERT_EQ(RunNeodbCapture(absl::StrCat("collections create ext --vectors external "
                                         "--dimension 4 --server ",
                                         server.address()),
                            dir.Sub(""))
                .status,
            0);
  r = RunNeodbCapture(base + "ext --pairs " + pairs, dir.Sub(""));
  EXPECT_NE(r.status, 0);
  EXPECT_NE(r.err.find("collection ext holds external vectors"), std::string::npos) << r.err;
  EXPECT_FALSE(std::filesystem::exists(dir.Sub("o")));
  EXPECT_EQ(server.Stop(), 0);
}

}  // namespace
}  // namespace neodb::testing
