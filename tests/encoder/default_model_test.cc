// The shipped default model (encoder/default_model/, trained by
// research/default_model/train_default_model.sh): found with no --model, within the size
// budget, and trained — its MLM head ranks the masked word of simple held-out
// sentences well above chance, and its embeddings retrieve held-out general
// and scientific pairs far better than a random model's.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include "encoder/checkpoint/safetensors.h"
#include "encoder/checkpoint/weights.h"
#include "encoder/default_model_dir.h"
#include "encoder/encoder.h"
#include "encoder/train/mask_predictor.h"
#include "encoder/train/retrieval_eval.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"

namespace neodb::encoder {
namespace {

std::string DefaultModel() {
  absl::StatusOr<std::string> dir = FindDefaultModelDir();
  EXPECT_TRUE(dir.ok()) << dir.status();
  return dir.ok() ? *dir : "";
}

TEST(DefaultModelTest, IsFoundWithoutAModelFlagAndFitsTheBudget) {
  const std::string dir = DefaultModel();
  ASSERT_FALSE(dir.empty());
  // The budget is the directory as the repository holds it: weights (zstd-
  // compressed, as shipped), tokenizer, config and card.
  uintmax_t bytes = 0;
  for (const auto& e : std::filesystem::directory_iterator(dir)) bytes += e.file_size();
  EXPECT_LE(bytes, 30u * 1000 * 1000) << "the issue's budget for the repository is 30 MB";
  absl::StatusOr<std::string> weights = WeightsFilePath(dir);
  ASSERT_TRUE(weights.ok()) << weights.status();
  absl::StatusOr<SafetensorsFile> file = SafetensorsFile::Open(*weights);
  ASSERT_TRUE(file.ok()) << file.status();
  for (const auto& t : file->tensors()) EXPECT_EQ(t.dtype_name, "F16") << t.name;
  EXPECT_NE(file->Find("decoder.weight"), nullptr) << "the MLM head ships for fill-mask";
}

// Simple sentences written for this test; none occurs in the training corpus
// (checked with grep -F when they were written). The target is a whole word
// that the tokenizer keeps as one piece.
struct Cloze {
  const char* sentence;
  const char* target;
};
const Cloze kClozes[] = {
    {"the sun rises in the east and sets in the west.", "west"},
    {"she poured a glass of cold water from the tap.", "water"},
    {"we walked to the station to catch the early train.", "train"},
    {"the children played in the garden until it was dark.", "dark"},
    {"he opened the door and stepped into the room.", "door"},
    {"my brother drives a red car to work every day.", "car"},
    {"the doctor told him to stay in bed for a week.", "week"},
    {"birds build their nests in the spring.", "spring"},
    {"the ship sailed across the sea to a distant island.", "sea"},
    {"she wrote a long letter to her mother.", "letter"},
    {"the river flows down from the mountains to the sea.", "river"},
    {"the teacher asked the students to open their books.", "books"},
    {"he was born in a small village in the north of england.", "village"},
    {"the function returns a list of strings.", "list"},
    {"you can install the package with the command below.", "package"},
    {"the kernel allocates memory for each process.", "memory"},
    {"the president spoke to congress about the economy.", "president"},
    {"the old man sat by the fire and read the newspaper.", "fire"},
    {"a dog barked loudly in the night.", "night"},
    {"they ate bread and cheese for lunch.", "lunch"},
    {"the meeting will take place on monday morning.", "morning"},
    {"the price of oil rose sharply last year.", "year"},
    {"she played the piano at the concert.", "piano"},
    {"he lost his keys and could not get into the house.", "house"},
    {"the army marched north to meet the enemy.", "army"},
    {"water boils at one hundred degrees.", "degrees"},
    {"the cat chased a mouse across the kitchen floor.", "mouse"},
    {"the file could not be opened because it does not exist.", "file"},
    {"please read the instructions carefully before you begin.", "instructions"},
    {"the war ended and the soldiers returned home.", "home"},
};

TEST(DefaultModelTest, MlmRanksTheMaskedWordAboveChance) {
  const std::string dir = DefaultModel();
  ASSERT_FALSE(dir.empty());
  absl::StatusOr<std::unique_ptr<train::MaskPredictor>> predictor = train::MaskPredictor::Open(dir);
  ASSERT_TRUE(predictor.ok()) << predictor.status();
  const Tokenizer& tok = (*predictor)->tokenizer();
  const int64_t vocab = (*predictor)->config().vocab_size;

  std::vector<int64_t> ranks;
  for (const Cloze& c : kClozes) {
    absl::StatusOr<std::vector<int32_t>> ids = tok.Encode(c.sentence);
    ASSERT_TRUE(ids.ok()) << ids.status();
    // Mask the target's piece exactly as pre-training masks a token.
    const std::string piece = std::string("\u2581") + c.target;
    auto it = std::find_if(ids->begin(), ids->end(),
                           [&](int32_t id) { return tok.IdToToken(id) == piece; });
    ASSERT_NE(it, ids->end()) << "\"" << c.target << "\" is not one piece in \"" << c.sentence
                              << "\"; pick another target";
    const int32_t target = *it;
    *it = tok.special().mask;
    absl::StatusOr<std::vector<train::MaskScores>> scores = (*predictor)->Predict(*ids);
    ASSERT_TRUE(scores.ok()) << scores.status();
    ASSERT_EQ(scores->size(), 1u);
    ranks.push_back(train::RankOf((*scores)[0].logits, target));
    std::printf("  rank %5lld  %-12s %s\n", static_cast<long long>(ranks.back()), c.target,
                c.sentence);
  }
  std::vector<int64_t> sorted = ranks;
  std::sort(sorted.begin(), sorted.end());
  const int64_t median = sorted[sorted.size() / 2];
  const auto rate = [&](int64_t k) {
    return static_cast<double>(
               std::count_if(ranks.begin(), ranks.end(), [k](int64_t r) { return r <= k; })) /
           static_cast<double>(ranks.size());
  };
  double mrr = 0;
  for (int64_t r : ranks) mrr += 1.0 / static_cast<double>(r);
  mrr /= static_cast<double>(ranks.size());
  // Chance: a uniform guess has median rank vocab/2 (10,000 for 20k pieces),
  // top-100 rate 100/vocab (0.5%), top-500 rate 500/vocab (2.5%) and MRR
  // about ln(vocab)/vocab (0.05%).
  std::printf(
      "median rank %lld of %lld (chance %lld), top-100 %.3f (chance %.4f), top-500 %.3f "
      "(chance %.4f), MRR %.4f\n",
      static_cast<long long>(median), static_cast<long long>(vocab),
      static_cast<long long>(vocab / 2), rate(100), 100.0 / vocab, rate(500), 500.0 / vocab, mrr);
  // Measured when the model was made (encoder/default_model/README.md): median
  // 219, top-100 0.33, top-500 0.67 (20 of 30); version 4 (20,000 pieces): median
  // 255, top-100 0.27, top-500 0.63; version 5: median 269, top-100 0.27,
  // top-500 0.63. For comparison: a random
  // model median 5,745, top-500 0; the pre-training checkpoint median 247;
  // the previous shipped model, whose head was only re-fitted to the
  // contrastively trained encoder (no auxiliary MLM loss), median 1,419,
  // top-500 0.23, and it fails these bounds.
  EXPECT_LE(median, vocab / 20) << "at least 10x better than chance";
  EXPECT_GE(rate(100), 5.0 / 30) << "20x the chance rate";
  EXPECT_GE(rate(500), 12.0 / 30) << "10x the chance rate";
}

// Retrieval metrics of the shipped model on a committed fixture of held-out
// pairs (tests/testdata/default_model/NAME, 200 {"query", "positive"} lines):
// every query against the pool of all distinct positives, embedded through
// the inference encoder the server uses.
train::RetrievalMetrics HeldOutRetrieval(const std::string& dir, const std::string& name) {
  const char* src = std::getenv("NEODB_SOURCE_DIR");
  const std::string path = std::string(src ? src : ".") + "/tests/testdata/default_model/" + name;
  std::ifstream in(path);
  EXPECT_TRUE(in) << path;
  std::vector<std::string> queries, pool;
  std::vector<std::vector<int64_t>> relevant;
  std::map<std::string, int64_t> pool_index;
  std::string line;
  while (std::getline(in, line)) {
    const nlohmann::json j = nlohmann::json::parse(line);
    const std::string positive = j.at("positive").get<std::string>();
    auto [it, added] = pool_index.emplace(positive, static_cast<int64_t>(pool.size()));
    if (added) pool.push_back(positive);
    queries.push_back(j.at("query").get<std::string>());
    relevant.push_back({it->second});
  }
  EXPECT_EQ(queries.size(), 200u) << path;
  if (queries.empty()) return {};
  absl::StatusOr<std::unique_ptr<Encoder>> enc = Encoder::Open(dir, {});
  EXPECT_TRUE(enc.ok()) << enc.status();
  if (!enc.ok()) return {};
  EmbedOptions options;
  options.normalize = true;
  absl::StatusOr<std::vector<Embedding>> qv = (*enc)->Embed(queries, options);
  absl::StatusOr<std::vector<Embedding>> pv = (*enc)->Embed(pool, options);
  EXPECT_TRUE(qv.ok()) << qv.status();
  EXPECT_TRUE(pv.ok()) << pv.status();
  if (!qv.ok() || !pv.ok()) return {};
  const int64_t dim = static_cast<int64_t>((*qv)[0].vector.size());
  std::vector<float> q, p;
  for (const Embedding& e : *qv) q.insert(q.end(), e.vector.begin(), e.vector.end());
  for (const Embedding& e : *pv) p.insert(p.end(), e.vector.begin(), e.vector.end());
  const train::RetrievalMetrics m =
      train::ScoreRetrieval(q.data(), static_cast<int64_t>(queries.size()), p.data(),
                            static_cast<int64_t>(pool.size()), dim, relevant);
  std::printf("%s: R@1 %.3f R@10 %.3f nDCG@10 %.3f (%lld queries, pool %lld)\n", name.c_str(),
              m.recall_at_1, m.recall_at_10, m.ndcg_at_10, static_cast<long long>(m.num_queries),
              static_cast<long long>(m.pool_size));
  return m;
}

// Held-out general-English pairs (WordNet, GCIDE, inverse cloze over the
// corpus): make_pairs.py --hold-out keeps their queries out of training.
// Measured when the model was made: nDCG@10 0.605 for the shipped model
// (version 5, the soup; version 4, whole-word pieces: 0.603; version 2, with the GloVe channel:
// 0.560; version 1: 0.491; session 3's, no auxiliary MLM: 0.495; session 2's, trained on general
// pairs only: 0.565), 0.208 for a random model of version 1's shape.
TEST(DefaultModelTest, RetrievesHeldOutGeneralPairs) {
  const std::string dir = DefaultModel();
  ASSERT_FALSE(dir.empty());
  const train::RetrievalMetrics m = HeldOutRetrieval(dir, "general_eval_200.jsonl");
  EXPECT_GE(m.ndcg_at_10, 0.40) << "a random model of this shape scores 0.21";
}

// Held-out scientific and technical pairs: 100 Gene Ontology term →
// definition and 100 Debian package short → long description, cut from the
// shipped run's general_eval.jsonl (make_pairs.py --check-held-out verifies
// that they stay out of training). Measured when the model was made:
// nDCG@10 0.919 for the shipped model (version 5; version 4: 0.925; version 2: 0.803; version 1:
// 0.860; session 3's: 0.857), 0.525 for session 2's model (no scientific pairs), 0.390 for a random
// model (query and passage share words, which even random mean-pooled vectors pick up).
TEST(DefaultModelTest, RetrievesHeldOutSciencePairs) {
  const std::string dir = DefaultModel();
  ASSERT_FALSE(dir.empty());
  const train::RetrievalMetrics m = HeldOutRetrieval(dir, "science_eval_200.jsonl");
  EXPECT_GE(m.ndcg_at_10, 0.75) << "a random model of this shape scores 0.39";
}

// Issue 21's example: the model must know that a puppy running across grass
// is closer to a dog running in a park than a falling stock market is (mean
// pooling, L2-normalised, as the server embeds). The previous model scored
// both 0.218 / 0.219 (no word knowledge); the GloVe channel
// (research/glove/glove_channel.py) is what separates them: 0.535 / 0.092 when
// it was made (a gap of 0.44; version 4: 0.471 / 0.147; version 5: 0.496 /
// 0.130; the SIF-GloVe teacher
// 0.657 / 0.024). The bound
// asks for under half that gap, far above what a model without word
// knowledge shows (-0.001).
TEST(DefaultModelTest, ADogIsCloserToAPuppyThanToTheStockMarket) {
  const std::string dir = DefaultModel();
  ASSERT_FALSE(dir.empty());
  absl::StatusOr<std::unique_ptr<Encoder>> enc = Encoder::Open(dir, {});
  ASSERT_TRUE(enc.ok()) << enc.status();
  EmbedOptions options;
  options.normalize = true;
  absl::StatusOr<std::vector<Embedding>> e =
      (*enc)->Embed({"a dog is running in the park", "a puppy runs across the grass",
                     "the stock market fell sharply today"},
                    options);
  ASSERT_TRUE(e.ok()) << e.status();
  const auto cosine = [&](int a, int b) {
    double dot = 0;
    for (size_t i = 0; i < (*e)[a].vector.size(); ++i) dot += (*e)[a].vector[i] * (*e)[b].vector[i];
    return dot;
  };
  const double puppy = cosine(0, 1), market = cosine(0, 2);
  std::printf("cos(dog, puppy) %.3f, cos(dog, stock market) %.3f\n", puppy, market);
  EXPECT_GT(puppy, market + 0.2) << "the model does not know what a puppy is";
}

}  // namespace
}  // namespace neodb::encoder
