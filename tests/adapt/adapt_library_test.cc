// adapt/: pairs tied to a collection, the seeded split, the mining rule,
// the ranking metrics and the document-vector cache.
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>
#include <set>

#include "gtest/gtest.h"
#include "adapt/adapt_pairs.h"
#include "adapt/collection_eval.h"
#include "adapt/job_io.h"
#include "adapt/negative_mining.h"
#include "adapt/paired_difference.h"
#include "adapt/vector_cache.h"
#include "common/atomic_file.h"
#include "common/env_memory.h"

namespace neodb::adapt {
namespace {

CollectionDocs Docs() {
  CollectionDocs d;
  d.Add("a", "The cat sat on the mat.");
  d.Add("b", "Dogs chase cats in the garden.");
  d.Add("c", "the  CAT sat on the mat.");  // a copy of a, other id
  d.Add("d", "Quantum chromodynamics of gluons.");
  d.Add("e", "Gluon fields and quarks in QCD.");
  return d;
}

TEST(AdaptPairsTest, ResolvesIdsAndTextsAndGroupsQueries) {
  const CollectionDocs docs = Docs();
  auto q = ParseAdaptPairs(
      "{\"query\":\"cats\",\"positive_id\":\"b\"}\n\n"
      "{\"query\":\"cats\",\"positive\":\"dogs chase   cats in the garden.\"}\n"
      "{\"query\":\"qcd\",\"positive_id\":\"e\",\"negatives\":[\"ignored\"]}\n"
      "{\"query\":\"cats\",\"positive_id\":\"a\"}\n",
      "p.jsonl", docs);
  ASSERT_TRUE(q.ok()) << q.status();
  ASSERT_EQ(q->size(), 2u);
  EXPECT_EQ((*q)[0].query, "cats");
  EXPECT_EQ((*q)[0].positives, (std::vector<int64_t>{0, 1}));
  EXPECT_EQ((*q)[1].positives, (std::vector<int64_t>{4}));
}

TEST(AdaptPairsTest, HostileLinesNameFileAndLine) {
  const CollectionDocs docs = Docs();
  const std::pair<const char*, const char*> cases[] = {
      {"{\"query\":\"x\",\"positive_id\":\"zz\"}", "p:1: positive_id \"zz\" is not a document"},
      {"{\"query\":\"x\"}", "p:1: give exactly one of"},
      {"{\"query\":\"x\",\"positive_id\":\"a\",\"positive\":\"t\"}", "p:1: give exactly one"},
      {"\n{\"query\":\"x\",\"positive\":\"no such text\"}", "p:2: \"positive\" matches no"},
      {"{\"query\":\"  \",\"positive_id\":\"a\"}", "p:1: \"query\" must be a non-empty"},
      {"{\"query\":1,\"positive_id\":\"a\"}", "p:1: \"query\" must be"},
      {"{\"query\":\"x\",\"positive_id\":7}", "p:1: \"positive_id\" must be a string"},
      {"[1,2]", "p:1: expected a JSON object"},
      {"{oops", "p:1: malformed JSON"},
      {"\n\n", "p: no pairs"},
  };
  for (const auto& [text, want] : cases) {
    auto q = ParseAdaptPairs(text, "p", docs);
    ASSERT_FALSE(q.ok()) << text;
    EXPECT_EQ(q.status().code(), absl::StatusCode::kInvalidArgument) << text;
    EXPECT_NE(std::string(q.status().message()).find(want), std::string::npos)
        << q.status() << " wanted " << want;
  }
  EXPECT_EQ(ReadAdaptPairs("/nonexistent/pairs.jsonl", docs).status().code(),
            absl::StatusCode::kNotFound);
}

TEST(AdaptPairsTest, SplitIsSeededDisjointAndComplete) {
  std::vector<QueryPositives> qs;
  for (int i = 0; i < 50; ++i) qs.push_back({"q" + std::to_string(i), {i}, i + 1});
  auto s1 = SplitPairs(qs, 0.2, 7), s2 = SplitPairs(qs, 0.2, 7), s3 = SplitPairs(qs, 0.2, 8);
  ASSERT_TRUE(s1.ok() && s2.ok() && s3.ok());
  EXPECT_EQ(s1->held_out.size(), 10u);
  EXPECT_EQ(s1->train.size(), 40u);
  std::set<std::string> held, held3, all;
  for (const auto& q : s1->held_out) held.insert(q.query);
  for (const auto& q : s3->held_out) held3.insert(q.query);
  for (const auto& q : s1->train) EXPECT_EQ(held.count(q.query), 0u);
  for (size_t i = 0; i < s1->held_out.size(); ++i) {
    EXPECT_EQ(s1->held_out[i].query, s2->held_out[i].query);
  }
  EXPECT_NE(held, held3);  // another seed, another split (C(50,10) choices)
  EXPECT_FALSE(SplitPairs(qs, 0, 1).ok());
  EXPECT_FALSE(SplitPairs(qs, 1, 1).ok());
  EXPECT_FALSE(SplitPairs({qs[0]}, 0.5, 1).ok());
  // Tiny sets still keep one query on each side.
  auto two = SplitPairs({qs[0], qs[1]}, 0.01, 1);
  ASSERT_TRUE(two.ok());
  EXPECT_EQ(two->held_out.size(), 1u);
  EXPECT_EQ(two->train.size(), 1u);
}

TEST(NegativeMiningTest, InterleavesLegsSkipsPositivesAndNearDuplicates) {
  const CollectionDocs docs = Docs();
  // Query's positive: a (0). c (2) is a's copy; b, d, e are fair negatives.
  MiningOptions opt{.count = 2, .jaccard_threshold = 0.9};
  EXPECT_EQ(MineNegatives({0, 2, 3}, {1, 2, 4}, {0}, docs, opt), (std::vector<int64_t>{1, 3}));
  opt.count = 3;
  EXPECT_EQ(MineNegatives({0, 2, 3}, {1, 2, 4}, {0}, docs, opt), (std::vector<int64_t>{1, 3, 4}));
  // An empty leg is fine; fewer candidates than asked gives fewer negatives.
  EXPECT_EQ(MineNegatives({}, {2, 4}, {0}, docs, opt), (std::vector<int64_t>{4}));
  opt.count = 0;
  EXPECT_TRUE(MineNegatives({1, 3}, {4}, {0}, docs, opt).empty());
  // skip passes over each leg's top ranks, positives or not.
  opt.count = 3;
  opt.skip = 1;
  EXPECT_EQ(MineNegatives({0, 2, 3}, {1, 2, 4}, {0}, docs, opt), (std::vector<int64_t>{3, 4}));
  opt.skip = 3;
  EXPECT_TRUE(MineNegatives({0, 2, 3}, {1, 2, 4}, {0}, docs, opt).empty());
}

TEST(NegativeMiningTest, ScoreRulePassesOverLikelyUnlabelledPositives) {
  const CollectionDocs docs = Docs();
  // Positives a (0) and e (4) score 0.8 and 0.6: the ceiling at ratio 0.9 is
  // 0.9 × 0.6 = 0.54 (the lowest positive). b (1) at 0.7 and d (3) at 0.55
  // are passed over, and c (2) is a's copy: no negative is left.
  const std::vector<double> cosine = {0.8, 0.7, 0.9, 0.55, 0.6};
  const QueryScore score = [&](int64_t doc) { return cosine[static_cast<size_t>(doc)]; };
  MiningOptions opt{.count = 2, .jaccard_threshold = 0.9, .max_score_ratio = 0.9};
  int64_t passed = 0;
  EXPECT_TRUE(MineNegatives({1, 2}, {3}, {0, 4}, docs, opt, score, &passed).empty());
  EXPECT_EQ(passed, 2);
  // Ratio 1: the ceiling is 0.6, so d (0.55) is kept and b (0.7) is not.
  opt.max_score_ratio = 1.0;
  passed = 0;
  EXPECT_EQ(MineNegatives({1, 2}, {3}, {0, 4}, docs, opt, score, &passed),
            (std::vector<int64_t>{3}));
  EXPECT_EQ(passed, 1);
  // The boundary is inclusive: a candidate scoring exactly the ceiling stays.
  const std::vector<double> tie = {0.5, 0.5, 0, 0, 0.5};
  const QueryScore tie_score = [&](int64_t doc) { return tie[static_cast<size_t>(doc)]; };
  EXPECT_EQ(MineNegatives({1}, {}, {0}, docs, opt, tie_score), (std::vector<int64_t>{1}));
  // A positive scoring at or below 0 turns the rule off for the query.
  const std::vector<double> lost = {-0.2, 0.7, 0, 0.5, 0};
  const QueryScore lost_score = [&](int64_t doc) { return lost[static_cast<size_t>(doc)]; };
  passed = 0;
  EXPECT_EQ(MineNegatives({1, 2}, {3}, {0}, docs, opt, lost_score, &passed),
            (std::vector<int64_t>{1, 3}));
  EXPECT_EQ(passed, 0);
  // Ratio 0 (off), or no scores: the rule does nothing.
  opt.max_score_ratio = 0;
  EXPECT_EQ(MineNegatives({1, 2}, {3}, {0, 4}, docs, opt, score), (std::vector<int64_t>{1, 3}));
  opt.max_score_ratio = 0.9;
  EXPECT_EQ(MineNegatives({1, 2}, {3}, {0, 4}, docs, opt), (std::vector<int64_t>{1, 3}));
}

TEST(NegativeMiningTest, NearDuplicateRule) {
  EXPECT_TRUE(IsNearDuplicate("A  b C", "a b c", 0.9));
  EXPECT_DOUBLE_EQ(WordJaccard("a b c d", "a b c e"), 3.0 / 5.0);
  EXPECT_FALSE(IsNearDuplicate("a b c d", "a b c e", 0.9));
  EXPECT_TRUE(IsNearDuplicate("a b c d", "a b c e", 0.6));
  // 10 shared words of 11: 0.909 >= 0.9.
  EXPECT_TRUE(
      IsNearDuplicate("w1 w2 w3 w4 w5 w6 w7 w8 w9 w10", "w1 w2 w3 w4 w5 w6 w7 w8 w9 w10 x", 0.9));
}

TEST(CollectionEvalTest, RankingMetricsByHand) {
  // q0: relevant {5}, found at rank 2. q1: relevant {1, 2}, rank 1 and
  // beyond 10. q2: nothing found.
  const std::vector<std::vector<int64_t>> ranked = {
      {9, 5, 7}, {1, 3, 4, 6, 7, 8, 9, 10, 11, 12, 2}, {3}};
  const std::vector<std::vector<int64_t>> relevant = {{5}, {1, 2}, {8}};
  const RankMetrics m = ScoreRankings(ranked, relevant);
  EXPECT_EQ(m.queries, 3);
  const double ndcg0 = 1 / std::log2(3.0);
  const double ndcg1 = 1 / (1 + 1 / std::log2(3.0));
  EXPECT_NEAR(m.ndcg_at_10, (ndcg0 + ndcg1 + 0) / 3, 1e-12);
  EXPECT_NEAR(m.recall_at_10, (1 + 0.5 + 0) / 3, 1e-12);
  EXPECT_NEAR(m.mrr_at_10, (0.5 + 1 + 0) / 3, 1e-12);
  ASSERT_EQ(m.ndcg_per_query.size(), 3u);
  EXPECT_NEAR(m.ndcg_per_query[0], ndcg0, 1e-12);
  EXPECT_NEAR(m.ndcg_per_query[1], ndcg1, 1e-12);
  EXPECT_EQ(m.ndcg_per_query[2], 0);
}

TEST(PairedDifferenceTest, NoChangeAndAConstantShiftAreExact) {
  const std::vector<double> before = {0.1, 0.5, 0.9, 0.0, 1.0};
  PairedDifference d = PairedBootstrap(before, before);
  EXPECT_EQ(d.queries, 5);
  EXPECT_EQ(d.mean, 0);
  EXPECT_EQ(d.low, 0);
  EXPECT_EQ(d.high, 0);
  EXPECT_EQ(d.better, 0);
  EXPECT_EQ(d.worse, 0);
  // Every resample of a constant difference has that mean.
  std::vector<double> after;
  for (double b : before) after.push_back(b + 0.25);
  d = PairedBootstrap(before, after);
  EXPECT_NEAR(d.mean, 0.25, 1e-12);
  EXPECT_NEAR(d.low, 0.25, 1e-12);
  EXPECT_NEAR(d.high, 0.25, 1e-12);
  EXPECT_EQ(d.better, 5);
  EXPECT_EQ(d.worse, 0);
  EXPECT_EQ(PairedBootstrap({}, {}).queries, 0);
}

TEST(PairedDifferenceTest, IntervalOfOneChangedQueryOfFour) {
  // One query of four gains 1: a resample's mean is k/4 where k ~ Binomial(4, 1/4).
  // P(k = 0) = 0.316, so the 2.5th percentile is 0; P(k <= 2) = 0.949 and
  // P(k <= 3) = 0.996, so the 97.5th is 3/4. 10,000 resamples estimate those
  // probabilities to about 0.004, far from 0.025 and 0.975, so this holds for
  // any seed.
  for (uint64_t seed : {1, 2, 3}) {
    const PairedDifference d = PairedBootstrap({0, 0, 0, 0}, {1, 0, 0, 0}, 10000, seed);
    EXPECT_EQ(d.mean, 0.25);
    EXPECT_EQ(d.low, 0);
    EXPECT_EQ(d.high, 0.75);
    EXPECT_EQ(d.better, 1);
    EXPECT_EQ(d.worse, 0);
  }
  // The same seed gives the same interval (a rerun prints the same table).
  const std::vector<double> b = {0.2, 0.4, 0.1, 0.9, 0.3, 0.5};
  const std::vector<double> a = {0.3, 0.1, 0.6, 0.9, 0.8, 0.4};
  const PairedDifference x = PairedBootstrap(b, a, 500, 7), y = PairedBootstrap(b, a, 500, 7);
  EXPECT_EQ(x.low, y.low);
  EXPECT_EQ(x.high, y.high);
  EXPECT_LE(x.low, x.mean);
  EXPECT_GE(x.high, x.mean);
  EXPECT_EQ(x.better, 3);
  EXPECT_EQ(x.worse, 2);
}

TEST(CollectionEvalTest, VectorLegsRankByCosineAndKeywordLegsByBm25) {
  // Unit vectors in 2-D: doc 1 is the query's direction.
  const std::vector<float> docs = {1, 0, 0.6f, 0.8f, 0, 1};
  const std::vector<float> query = {0.6f, 0.8f};
  auto legs = VectorLegs(query, docs, 2, 2, index::Metric::kCosine);
  ASSERT_EQ(legs.size(), 1u);
  ASSERT_EQ(legs[0].size(), 2u);
  EXPECT_EQ(legs[0][0].id, 1u);
  EXPECT_EQ(legs[0][1].id, 2u);  // 0.8 > 0.6
  // The collection's metric, not always cosine: a long vector wins on inner
  // product, the nearest point on L2.
  const std::vector<float> raw = {3, 0, 0.6f, 0.8f, 0.5f, 0.5f};
  legs = VectorLegs(query, raw, 2, 3, index::Metric::kInnerProduct);
  ASSERT_EQ(legs[0].size(), 3u);
  EXPECT_EQ(legs[0][0].id, 0u);  // 1.8 > 1.0 > 0.7
  EXPECT_NEAR(legs[0][0].score, 1.8, 1e-6);
  legs = VectorLegs(query, raw, 2, 3, index::Metric::kL2);
  EXPECT_EQ(legs[0][0].id, 1u);  // distance 0
  EXPECT_EQ(legs[0][1].id, 2u);  // 0.1^2 + 0.3^2 against 2.4^2 + 0.8^2

  const CollectionDocs cd = Docs();
  auto index = BuildKeywordIndex(cd, KeywordSettings{});
  ASSERT_TRUE(index.ok());
  auto kw = KeywordLegs(**index, {"gluons", "zebra"}, 10);
  ASSERT_TRUE(kw.ok());
  ASSERT_EQ(kw->size(), 2u);
  ASSERT_FALSE((*kw)[0].empty());
  std::set<uint64_t> got;
  for (const auto& h : (*kw)[0]) got.insert(h.id);
  EXPECT_EQ(got, (std::set<uint64_t>{3, 4}));  // stemmed: gluons ~ gluon
  EXPECT_TRUE((*kw)[1].empty());
}

// The ids of a keyword leg, best first.
std::vector<uint64_t> LegIds(const keyword::KeywordIndex& index, const std::string& query) {
  auto legs = KeywordLegs(index, {query}, 10);
  EXPECT_TRUE(legs.ok()) << legs.status();
  std::vector<uint64_t> ids;
  if (legs.ok()) {
    for (const auto& h : (*legs)[0]) ids.push_back(h.id);
  }
  return ids;
}

TEST(CollectionEvalTest, KeywordIndexReadsDocumentsAsTheCollectionDoes) {
  // The analyzer: english stems and folds case; none matches the text as written.
  const CollectionDocs cd = Docs();
  KeywordSettings none;
  none.options.analyzer = keyword::AnalyzerKind::kNone;
  none.options.k1 = 1.5;
  none.options.b = 0.75;
  auto english = BuildKeywordIndex(cd, KeywordSettings{});
  auto as_written = BuildKeywordIndex(cd, none);
  ASSERT_TRUE(english.ok() && as_written.ok());
  EXPECT_EQ((*as_written)->options().k1, 1.5);
  EXPECT_EQ((*as_written)->options().b, 0.75);
  EXPECT_EQ(LegIds(**english, "gluon").size(), 2u);
  EXPECT_EQ(LegIds(**as_written, "gluon"), std::vector<uint64_t>{});  // "Gluon", "gluons"
  EXPECT_EQ(LegIds(**as_written, "Gluon"), std::vector<uint64_t>{4});

  // The title field: found only through it, and ranked by its weight.
  CollectionDocs titled;
  titled.Add("in-text", "zebra zebra crossing rules", "");
  titled.Add("in-title", "crossing rules", "zebra");
  titled.Add("untitled", "rules");
  KeywordSettings light, heavy;
  heavy.title_weight = 20;
  auto l = BuildKeywordIndex(titled, light);
  auto h = BuildKeywordIndex(titled, heavy);
  ASSERT_TRUE(l.ok() && h.ok());
  EXPECT_EQ(LegIds(**l, "zebra"), (std::vector<uint64_t>{0, 1}));
  EXPECT_EQ(LegIds(**h, "zebra"), (std::vector<uint64_t>{1, 0}));
  EXPECT_EQ(titled.titles, (std::vector<std::string>{"", "zebra", ""}));
}

// A fresh file path under the test's temporary directory.
std::filesystem::path CachePath(const std::string& name) {
  const std::filesystem::path dir =
      std::filesystem::path(::testing::TempDir()) / "adapt_vector_cache";
  std::filesystem::create_directories(dir);
  std::filesystem::remove(dir / name);
  return dir / name;
}

TEST(VectorCacheTest, DocumentsHashSeesEveryIdAndTextAndTheirBoundaries) {
  CollectionDocs a, b, c;
  a.Add("1", "ab");
  a.Add("2", "c");
  b.Add("1", "a");
  b.Add("2", "bc");  // same concatenation, other documents
  c.Add("1", "ab");
  c.Add("3", "c");
  EXPECT_EQ(DocumentsHash(a), DocumentsHash(a));
  EXPECT_NE(DocumentsHash(a), DocumentsHash(b));
  EXPECT_NE(DocumentsHash(a), DocumentsHash(c));
  EXPECT_EQ(DocumentsHash(a).size(), 16u);
}

TEST(VectorCacheTest, RoundTripsAndRefusesStaleTornOrForeignFiles) {
  const CollectionDocs docs = Docs();
  EmbedSettings settings;
  const VectorCacheKey key = {.model_id = "nb-1",
                              .documents = docs.size(),
                              .dim = 3,
                              .documents_hash = DocumentsHash(docs),
                              .settings = SettingsFingerprint(settings)};
  std::vector<float> vecs(static_cast<size_t>(docs.size() * 3));
  for (size_t i = 0; i < vecs.size(); ++i) vecs[i] = 0.25f * static_cast<float>(i) - 1.0f;
  const auto path = CachePath("v.bin");
  std::string why;

  EXPECT_FALSE(LoadDocVectors(path, key, &why).has_value());
  EXPECT_EQ(why, "no saved vectors");

  EXPECT_FALSE(SaveDocVectors(path, std::vector<float>(4), key).ok());  // wrong shape
  // A directory that is not there: an error, and nothing left behind.
  const auto nowhere = path.parent_path() / "missing" / "v.bin";
  EXPECT_FALSE(SaveDocVectors(nowhere, vecs, key).ok());
  EXPECT_FALSE(std::filesystem::exists(nowhere.string() + ".tmp"));
  ASSERT_TRUE(SaveDocVectors(path, vecs, key).ok());
  EXPECT_FALSE(std::filesystem::exists(path.string() + ".tmp"));
  const auto got = LoadDocVectors(path, key, &why);
  ASSERT_TRUE(got.has_value()) << why;
  EXPECT_EQ(*got, vecs);  // bit for bit

  // Another model, other documents, other settings, another shape: stale.
  VectorCacheKey other = key;
  other.model_id = "nb-2";
  std::vector<VectorCacheKey> stale = {other};
  other = key;
  other.documents_hash = "0000000000000000";
  stale.push_back(other);
  other = key;
  settings.document_prefix = "passage: ";
  other.settings = SettingsFingerprint(settings);
  stale.push_back(other);
  other = key;
  settings.document_prefix = "";
  settings.precision = encoder::Precision::kBf16;
  other.settings = SettingsFingerprint(settings);
  stale.push_back(other);
  other = key;
  other.dim = 5;
  stale.push_back(other);
  for (const VectorCacheKey& k : stale) {
    EXPECT_FALSE(LoadDocVectors(path, k, &why).has_value()) << k.model_id << " " << k.settings;
    EXPECT_NE(why.find("another model"), std::string::npos) << why;
  }

  // Torn: a byte short, or one extra.
  const auto size = std::filesystem::file_size(path);
  std::filesystem::resize_file(path, size - 1);
  EXPECT_FALSE(LoadDocVectors(path, key, &why).has_value());
  EXPECT_EQ(why, "truncated or oversized");
  std::filesystem::resize_file(path, size + 1);
  EXPECT_FALSE(LoadDocVectors(path, key, &why).has_value());
  EXPECT_EQ(why, "truncated or oversized");

  // A non-finite value is refused, not handed to the metrics.
  std::vector<float> bad = vecs;
  bad[5] = std::numeric_limits<float>::quiet_NaN();
  ASSERT_TRUE(SaveDocVectors(path, bad, key).ok());
  EXPECT_FALSE(LoadDocVectors(path, key, &why).has_value());
  EXPECT_EQ(why, "holds a non-finite value");

  // Something else entirely, with no newline for a long way.
  std::ofstream(path, std::ios::binary | std::ios::trunc) << std::string(1 << 20, 'x');
  EXPECT_FALSE(LoadDocVectors(path, key, &why).has_value());
  EXPECT_EQ(why, "not a vector file");
  std::ofstream(path, std::ios::binary | std::ios::trunc) << "neodb-doc-vectors 1\n{not json\n";
  EXPECT_FALSE(LoadDocVectors(path, key, &why).has_value());
  EXPECT_EQ(why, "malformed header");
  // A directory where the file should be: cannot be read, still no error.
  std::filesystem::remove(path);
  std::filesystem::create_directories(path);
  EXPECT_FALSE(LoadDocVectors(path, key, &why).has_value());
  std::filesystem::remove(path);
}

// The adapt job's reads go through the Env they are given: a memory Env
// serves a job file and a vector file with no file on disk.
TEST(AdaptFileReads, GoThroughTheEnv) {
  std::unique_ptr<Env> env = NewMemEnv();
  ASSERT_TRUE(WriteFileAtomically(env.get(), "/adapt.json", {R"({"applied": true})"}).ok());
  absl::StatusOr<nlohmann::json> j = ReadJsonFile("/adapt.json", env.get());
  ASSERT_TRUE(j.ok()) << j.status();
  EXPECT_TRUE(j->value("applied", false));
  EXPECT_EQ(ReadJsonFile("/none.json", env.get()).status().message(), "cannot open /none.json");
  EXPECT_TRUE(absl::IsNotFound(ReadJsonFile("/adapt.json").status()));  // not on disk

  // A vector file written as SaveDocVectors writes it, read back from memory.
  const VectorCacheKey key = {.model_id = "nb-1", .documents = 2, .dim = 2,
                              .documents_hash = "0123456789abcdef", .settings = "s"};
  const std::vector<float> vecs = {1.0f, -2.0f, 0.5f, 4.0f};
  const std::filesystem::path disk = std::filesystem::temp_directory_path() /
                                     ("neodb_adapt_env_" + std::to_string(::getpid()) + ".bin");
  ASSERT_TRUE(SaveDocVectors(disk, vecs, key).ok());
  absl::StatusOr<std::string> bytes = ReadFileToString(Env::Default(), disk.string());
  std::filesystem::remove(disk);
  ASSERT_TRUE(bytes.ok()) << bytes.status();
  ASSERT_TRUE(WriteFileAtomically(env.get(), "/v.bin", {*bytes}).ok());
  std::string why;
  const auto got = LoadDocVectors("/v.bin", key, &why, env.get());
  ASSERT_TRUE(got.has_value()) << why;
  EXPECT_EQ(*got, vecs);
  EXPECT_FALSE(LoadDocVectors("/none.bin", key, &why, env.get()).has_value());
  EXPECT_EQ(why, "no saved vectors");
}

}  // namespace
}  // namespace neodb::adapt
