// The adapt job against a fake server: what it refuses before any work (no
// listing, no mining, nothing written), and the rollback's rules.
#include "adapt/adapt_job.h"

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "encoder/model.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"

namespace neodb::adapt {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

// Records each call by name; answers what the test set.
class FakeServer : public ServerSide {
 public:
  CollectionFacts facts;
  std::string models_dir;
  absl::Status check_reindex = absl::OkStatus();
  CollectionDocs docs;
  VerifyReport verify;
  int stored_dim = 0;  // > 0: the listing gives stored vectors of this dimension
  std::vector<std::string> calls;
  std::string reindexed_onto;
  keyword::FusionOptions fusion_set;

  absl::StatusOr<CollectionFacts> Describe(const std::string&) override {
    calls.push_back("Describe");
    return facts;
  }
  absl::StatusOr<std::string> ModelsDir() override {
    calls.push_back("ModelsDir");
    return models_dir;
  }
  absl::StatusOr<CollectionDocs> ListDocuments(const std::string&, const std::string&,
                                               StoredVectors* stored) override {
    calls.push_back("ListDocuments");
    if (stored != nullptr && stored_dim > 0) {
      stored->dim = stored_dim;
      for (int64_t i = 0; i < docs.size() * stored_dim; ++i) stored->rows.push_back(0.01f * i);
    }
    return docs;
  }
  absl::StatusOr<std::vector<std::string>> NearTextIds(const std::string&, const std::string&,
                                                       int k, const std::string&) override {
    calls.push_back("NearTextIds");
    // Every document, in id order: the mining rule picks from them.
    const size_t n = std::min(docs.ids.size(), static_cast<size_t>(k));
    return std::vector<std::string>(docs.ids.begin(), docs.ids.begin() + n);
  }
  absl::Status CheckReindex(const std::string&, const std::string&) override {
    calls.push_back("CheckReindex");
    return check_reindex;
  }
  absl::Status ReindexAndWait(const std::string&, const std::string& model_dir) override {
    calls.push_back("ReindexAndWait");
    reindexed_onto = model_dir;
    return absl::OkStatus();
  }
  absl::Status SetFusion(const std::string&, const keyword::FusionOptions& fusion) override {
    calls.push_back("SetFusion");
    fusion_set = fusion;
    return absl::OkStatus();
  }
  absl::StatusOr<VerifyReport> Verify(const std::string&) override {
    calls.push_back("Verify");
    if (!verify.model_id.empty()) return verify;
    // As a server would: the collection is on the model it was reindexed onto.
    auto model = encoder::LoadModel(reindexed_onto);
    if (!model.ok()) return model.status();
    return VerifyReport{.model_id = (*model)->model_id(), .stored = 1, .indexed = 1};
  }
};

using Calls = std::vector<std::string>;

void WriteText(const fs::path& path, const std::string& text) {
  std::ofstream(path, std::ios::binary) << text;
}

// The small BERT of the encoder's golden tests: a model LoadModel opens.
std::string TinyModel() {
  const char* root = std::getenv("NEODB_SOURCE_DIR");
  return (fs::path(root != nullptr ? root : ".") / "tests/testdata/bert_golden/tiny").string();
}

class AdaptJobTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           absl::StrCat("adapt_job_test_", ::testing::UnitTest::GetInstance()->random_seed(), "_",
                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_ / "model");
    // Enough of a model for the trainer's architecture check, nothing more:
    // a test that got as far as training would fail loudly.
    WriteText(dir_ / "model" / "config.json", R"({"model_type": "bert"})");
    server_.facts.model_id = "m-old";
    server_.facts.model_dir = (dir_ / "model").string();
    server_.facts.reading = CollectionReading{};
    options_.collection = "c";
    options_.pairs = (dir_ / "pairs.jsonl").string();
    options_.out = (dir_ / "out").string();
    WriteText(options_.pairs, R"({"query": "q", "positive_id": "d1"})" "\n");
  }
  void TearDown() override { fs::remove_all(dir_); }

  // Nothing written beside --out: the job stopped before its first file.
  void ExpectNothingWritten() {
    EXPECT_FALSE(fs::exists(dir_ / "out"));
    EXPECT_FALSE(fs::exists(dir_ / "out.adapt"));
    EXPECT_FALSE(fs::exists(dir_ / "out.work"));
  }

  fs::path dir_;
  FakeServer server_;
  AdaptOptions options_;
};

TEST_F(AdaptJobTest, FlagNumbersFailBeforeTheServerIsAsked) {
  options_.rounds = 0;
  const absl::Status s = AdaptJob(options_, server_).Run();
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(s.message()), HasSubstr("--rounds"));
  EXPECT_EQ(server_.calls, Calls{});
  ExpectNothingWritten();
}

TEST_F(AdaptJobTest, ExternalVectorsAreRefusedAfterDescribeAlone) {
  server_.facts.external_vectors = true;
  const absl::Status s = AdaptJob(options_, server_).Run();
  EXPECT_EQ(s.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(std::string(s.message()), HasSubstr("external vectors"));
  EXPECT_EQ(server_.calls, Calls{"Describe"});
  ExpectNothingWritten();
}

TEST_F(AdaptJobTest, TheUnnamedDefaultModelIsRefused) {
  server_.facts.model_dir = "";
  const absl::Status s = AdaptJob(options_, server_).Run();
  EXPECT_EQ(s.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(std::string(s.message()), HasSubstr("--model DIR"));
  EXPECT_EQ(server_.calls, Calls{"Describe"});
}

TEST_F(AdaptJobTest, AnUntrainableModelIsRefusedBeforeTheListing) {
  WriteText(dir_ / "model" / "config.json", R"({"model_type": "t5"})");
  const absl::Status s = AdaptJob(options_, server_).Run();
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(s.message()), HasSubstr("model_type"));
  EXPECT_EQ(server_.calls, Calls{"Describe"});
}

TEST_F(AdaptJobTest, AnApplyTheServerWouldRefuseStopsEverythingFirst) {
  options_.apply = true;
  server_.models_dir = "/srv/models";
  server_.check_reindex = absl::PermissionDeniedError("model_dir is outside the models directory");
  const absl::Status s = AdaptJob(options_, server_).Run();
  EXPECT_EQ(s.code(), absl::StatusCode::kPermissionDenied);
  EXPECT_THAT(std::string(s.message()),
              HasSubstr("--out must lie inside the server's models directory /srv/models"));
  EXPECT_THAT(std::string(s.message()), HasSubstr("Nothing was done"));
  // Asked before the listing: no document read, nothing mined or trained.
  EXPECT_EQ(server_.calls, (Calls{"Describe", "ModelsDir", "CheckReindex"}));
  ExpectNothingWritten();
}

TEST_F(AdaptJobTest, AnExistingOutIsRefusedWithoutResume) {
  fs::create_directories(dir_ / "out");
  const absl::Status s = AdaptJob(options_, server_).Run();
  EXPECT_EQ(s.code(), absl::StatusCode::kAlreadyExists);
  EXPECT_EQ(server_.calls, (Calls{"Describe", "ModelsDir"}));
}

TEST_F(AdaptJobTest, AnEmptyCollectionStopsBeforeMining) {
  const absl::Status s = AdaptJob(options_, server_).Run();
  EXPECT_EQ(s.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(std::string(s.message()), HasSubstr("the collection is empty"));
  EXPECT_EQ(server_.calls, (Calls{"Describe", "ModelsDir", "ListDocuments"}));
  ExpectNothingWritten();
}

TEST_F(AdaptJobTest, WithoutOutTheModelGoesIntoTheServersModelsDirectory) {
  options_.out = "";
  options_.apply = true;
  server_.models_dir = (dir_ / "models").string();
  server_.check_reindex = absl::PermissionDeniedError("no");  // stop right after the choice
  const absl::Status s = AdaptJob(options_, server_).Run();
  EXPECT_THAT(std::string(s.message()),
              HasSubstr(absl::StrCat("onto ", (dir_ / "models" / "adapt-c-").string())));
}

// --- a whole run, on the tiny BERT ------------------------------------------

nlohmann::json ReadJsonFile(const fs::path& path) {
  std::ifstream in(path);
  return nlohmann::json::parse(in);
}

class AdaptRunTest : public AdaptJobTest {
 protected:
  void SetUp() override {
    AdaptJobTest::SetUp();
    auto tiny = encoder::LoadModel(TinyModel());
    ASSERT_TRUE(tiny.ok()) << tiny.status();
    tiny_id_ = (*tiny)->model_id();
    server_.facts.model_id = tiny_id_;
    server_.facts.model_dir = TinyModel();
    const char* const texts[] = {
        "the quick brown fox jumps",   "the lazy dog and the cat",  "vector search index",
        "query model token embed",     "fast small large graph",    "node edge cosine dot",
        "hello world city school",     "first national university", "word piece greedy long",
        "data used by many state",     "new years later time",      "run play over city"};
    const char* const queries[] = {"fox", "dog", "search", "token", "graph", "cosine",
                                   "hello", "university", "piece", "state"};
    std::string pairs;
    for (size_t i = 0; i < std::size(texts); ++i) {
      server_.docs.Add(absl::StrCat("d", i < 10 ? "0" : "", i), texts[i]);
    }
    for (size_t i = 0; i < std::size(queries); ++i) {
      pairs += nlohmann::json{{"query", queries[i]}, {"positive_id", server_.docs.ids[i]}}.dump() +
               "\n";
    }
    WriteText(options_.pairs, pairs);
    options_.mine_from = "served";
    options_.trainer.steps = 4;
    options_.trainer.batch_size = 4;
    options_.trainer.chunk_size = 4;
    options_.trainer.lr = 1e-3;
    options_.trainer.warmup = kWarmupTenth;
    options_.threads = 1;
  }

  size_t Count(const std::string& call) const {
    return std::count(server_.calls.begin(), server_.calls.end(), call);
  }

  std::string tiny_id_;
};

TEST_F(AdaptRunTest, AppliesABetterModelThenRollsBackToThePreviousOne) {
  options_.apply = true;
  options_.min_gain = -2;  // any new model counts as better
  server_.stored_dim = 32;  // the tiny model's
  const absl::Status s = AdaptJob(options_, server_).Run();
  ASSERT_TRUE(s.ok()) << s;
  // The dry run first, then the listing; the training queries mined from the
  // server's ranking; the swap and its check last.
  ASSERT_GE(server_.calls.size(), 5u);
  EXPECT_EQ((Calls{server_.calls.begin(), server_.calls.begin() + 4}),
            (Calls{"Describe", "ModelsDir", "CheckReindex", "ListDocuments"}));
  EXPECT_EQ(Count("NearTextIds"), 8u);  // 10 queries, 2 held out
  EXPECT_EQ(Count("ReindexAndWait"), 1u);
  EXPECT_EQ(server_.calls.back(), "Verify");
  EXPECT_EQ(server_.reindexed_onto, (dir_ / "out").string());

  const nlohmann::json record = ReadJsonFile(dir_ / "out" / "adapt.json");
  EXPECT_EQ(record["collection"], "c");
  EXPECT_EQ(record["applied"], true);
  EXPECT_EQ(record["previous"]["model_dir"], TinyModel());
  EXPECT_EQ(record["previous"]["model_id"], tiny_id_);
  EXPECT_EQ(record["model_id"], ReadJsonFile(dir_ / "out" / "lineage.json")["model_id"]);
  EXPECT_TRUE(record["timings"].contains("total_s"));
  EXPECT_EQ(record["old_model_documents"], "the server's stored vectors");
  for (const char* f : {"train.jsonl", "mining.json", "held_out.jsonl"}) {
    EXPECT_TRUE(fs::exists(dir_ / "out.adapt" / f)) << f;
  }
  EXPECT_FALSE(fs::exists(dir_ / "out.adapt" / "old_model_vectors.bin"));  // only for step 4
  EXPECT_TRUE(fs::exists(dir_ / "out" / "adapt_queries.jsonl"));

  // The collection is now on the new model; --rollback takes it back.
  server_.calls.clear();
  server_.facts.model_id = record["model_id"].get<std::string>();
  server_.facts.model_dir = (dir_ / "out").string();
  options_.rollback = options_.collection;  // "c"
  const absl::Status r = AdaptJob(options_, server_).Rollback();
  ASSERT_TRUE(r.ok()) << r;
  EXPECT_EQ(server_.calls, (Calls{"Describe", "ReindexAndWait", "SetFusion", "Verify"}));
  EXPECT_EQ(server_.reindexed_onto, TinyModel());
}

TEST_F(AdaptRunTest, ANewModelNotBetterByMinGainIsNotApplied) {
  options_.apply = true;
  options_.min_gain = 2;  // no model can gain this much
  const absl::Status s = AdaptJob(options_, server_).Run();
  ASSERT_TRUE(s.ok()) << s;
  EXPECT_EQ(Count("CheckReindex"), 1u);
  EXPECT_EQ(Count("ReindexAndWait"), 0u);
  EXPECT_EQ(Count("Verify"), 0u);
  const nlohmann::json record = ReadJsonFile(dir_ / "out" / "adapt.json");
  EXPECT_EQ(record["applied"], false);
  EXPECT_EQ(record["old_model_documents"], "embedded");  // no stored vectors listed
}

TEST_F(AdaptRunTest, AResumeOfAFinishedRunTrainsNothingAgain) {
  ASSERT_TRUE(AdaptJob(options_, server_).Run().ok());
  const auto trained_at = fs::last_write_time(dir_ / "out" / "lineage.json");
  server_.calls.clear();
  options_.resume = true;
  const absl::Status s = AdaptJob(options_, server_).Run();
  ASSERT_TRUE(s.ok()) << s;
  EXPECT_EQ(Count("NearTextIds"), 0u);  // nothing mined
  EXPECT_EQ(fs::last_write_time(dir_ / "out" / "lineage.json"), trained_at);
}

// --- rollback ----------------------------------------------------------------

class AdaptRollbackTest : public AdaptJobTest {
 protected:
  void SetUp() override {
    AdaptJobTest::SetUp();
    auto tiny = encoder::LoadModel(TinyModel());
    ASSERT_TRUE(tiny.ok()) << tiny.status();
    tiny_id_ = (*tiny)->model_id();
    options_.rollback = "c";
    server_.facts.model_id = "m-new";
    // The collection is on an adapted model whose record names the tiny one.
    record_ = {{"collection", "c"},
               {"model_id", "m-new"},
               {"previous",
                {{"model_dir", TinyModel()},
                 {"model_id", tiny_id_},
                 {"fusion", "weighted"},
                 {"fusion_alpha", 0.3}}}};
    WriteRecord();
    server_.verify = {.model_id = tiny_id_, .stored = 3, .indexed = 3};
  }
  void WriteRecord() { WriteText(dir_ / "model" / "adapt.json", record_.dump(2)); }

  std::string tiny_id_;
  nlohmann::json record_;
};

TEST_F(AdaptRollbackTest, SwapsBackOntoThePreviousModelAndFusion) {
  const absl::Status s = AdaptJob(options_, server_).Rollback();
  ASSERT_TRUE(s.ok()) << s;
  EXPECT_EQ(server_.calls, (Calls{"Describe", "ReindexAndWait", "SetFusion", "Verify"}));
  EXPECT_EQ(server_.reindexed_onto, TinyModel());
  EXPECT_EQ(server_.fusion_set.method, keyword::FusionMethod::kWeighted);
  EXPECT_DOUBLE_EQ(server_.fusion_set.alpha, 0.3);
}

TEST_F(AdaptRollbackTest, ARecordWithoutAFusionRollsBackToAdaptive) {
  record_["previous"].erase("fusion");
  record_["previous"].erase("fusion_alpha");
  WriteRecord();
  ASSERT_TRUE(AdaptJob(options_, server_).Rollback().ok());
  EXPECT_EQ(server_.fusion_set.method, keyword::FusionMethod::kAdaptive);
}

TEST_F(AdaptRollbackTest, TheDefaultModelHasNothingToRollBackTo) {
  server_.facts.model_dir = "";
  const absl::Status s = AdaptJob(options_, server_).Rollback();
  EXPECT_EQ(s.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(std::string(s.message()), HasSubstr("the default model"));
  EXPECT_THAT(std::string(s.message()), HasSubstr("nothing to roll back to"));
  EXPECT_EQ(server_.calls, Calls{"Describe"});
}

TEST_F(AdaptRollbackTest, AModelAdaptDidNotMakeHasNothingToRollBackTo) {
  fs::remove(dir_ / "model" / "adapt.json");
  const absl::Status s = AdaptJob(options_, server_).Rollback();
  EXPECT_EQ(s.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(std::string(s.message()), HasSubstr("which neodb adapt did not make"));
  EXPECT_EQ(server_.calls, Calls{"Describe"});
}

TEST_F(AdaptRollbackTest, ARecordOfAnotherCollectionIsRefused) {
  record_["collection"] = "other";
  WriteRecord();
  const absl::Status s = AdaptJob(options_, server_).Rollback();
  EXPECT_EQ(s.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(std::string(s.message()), HasSubstr("records no previous model of collection c"));
  EXPECT_EQ(server_.calls, Calls{"Describe"});
}

TEST_F(AdaptRollbackTest, APreviousDirectoryThatNowHoldsAnotherModelIsRefused) {
  record_["previous"]["model_id"] = "m-gone";
  WriteRecord();
  const absl::Status s = AdaptJob(options_, server_).Rollback();
  EXPECT_EQ(s.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(std::string(s.message()), HasSubstr("not rolling back"));
  EXPECT_EQ(server_.calls, Calls{"Describe"});
}

TEST_F(AdaptRollbackTest, AVerifyOnAnotherModelIsAnError) {
  server_.verify.model_id = "m-new";
  const absl::Status s = AdaptJob(options_, server_).Rollback();
  EXPECT_EQ(s.code(), absl::StatusCode::kInternal);
  EXPECT_THAT(std::string(s.message()), HasSubstr("after the rollback the collection is on m-new"));
}

}  // namespace
}  // namespace neodb::adapt
