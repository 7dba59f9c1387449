// The shipped default model (encoder/default_model/, trained by
// tools/train_default_model.sh): found with no --model, within the size
// budget, and trained — its MLM head ranks the masked word of simple held-out
// sentences far above chance, and its embeddings rank a related text above
// unrelated ones.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include "encoder/checkpoint/safetensors.h"
#include "encoder/default_model_dir.h"
#include "encoder/encoder.h"
#include "encoder/train/mask_predictor.h"
#include "gtest/gtest.h"

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
  const auto bytes = std::filesystem::file_size(dir + "/model.safetensors");
  EXPECT_LE(bytes, 30u * 1000 * 1000) << "the issue's budget for the repository is 30 MB";
  absl::StatusOr<SafetensorsFile> file = SafetensorsFile::Open(dir + "/model.safetensors");
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

TEST(DefaultModelTest, MlmRanksTheMaskedWordFarAboveChance) {
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
  const double top10 =
      static_cast<double>(std::count_if(ranks.begin(), ranks.end(), [](int64_t r) { return r <= 10; })) /
      static_cast<double>(ranks.size());
  double mrr = 0;
  for (int64_t r : ranks) mrr += 1.0 / static_cast<double>(r);
  mrr /= static_cast<double>(ranks.size());
  // Chance: a uniform guess has median rank vocab/2 (6,000 for 12k pieces),
  // top-10 rate 10/vocab (0.08%) and MRR about ln(vocab)/vocab (0.08%).
  std::printf("median rank %lld of %lld (chance %lld), top-10 %.2f (chance %.4f), MRR %.3f\n",
              static_cast<long long>(median), static_cast<long long>(vocab),
              static_cast<long long>(vocab / 2), top10, 10.0 / vocab, mrr);
  EXPECT_LE(median, vocab / 100) << "at least 50x better than chance";
  EXPECT_GE(top10, 0.2);
}

double Cosine(const std::vector<float>& a, const std::vector<float>& b) {
  double dot = 0, na = 0, nb = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    dot += a[i] * b[i];
    na += a[i] * a[i];
    nb += b[i] * b[i];
  }
  return dot / std::sqrt(na * nb);
}

TEST(DefaultModelTest, EmbeddingsRankTheRelatedTextFirst) {
  const std::string dir = DefaultModel();
  ASSERT_FALSE(dir.empty());
  absl::StatusOr<std::unique_ptr<Encoder>> enc = Encoder::Open(dir, {});
  ASSERT_TRUE(enc.ok()) << enc.status();
  // Each query's related passage shares its topic, not its wording.
  const std::vector<std::pair<std::string, std::string>> pairs = {
      {"how do plants make food", "photosynthesis turns sunlight, water and carbon dioxide into sugar in green leaves"},
      {"symptoms of the flu", "influenza causes fever, cough, sore throat and aching muscles"},
      {"how to bake bread", "mix flour, yeast and water into a dough, let it rise, then put it in a hot oven"},
      {"the planets of the solar system", "mercury, venus, earth and mars orbit the sun closest, then the gas giants"},
      {"a large cat that lives in africa", "the lion is a big predator of the savanna, hunting in prides"},
      {"how a car engine works", "fuel burns in the cylinders and pushes the pistons that turn the crankshaft"},
      {"free software licences", "the gpl lets anyone copy, change and share a program as long as the source stays open"},
      {"causes of the civil war", "slavery and states' rights divided the north and the south before the fighting began"},
  };
  std::vector<std::string> queries, passages;
  for (const auto& [q, p] : pairs) {
    queries.push_back(q);
    passages.push_back(p);
  }
  EmbedOptions options;
  options.normalize = true;
  absl::StatusOr<std::vector<Embedding>> qv = (*enc)->Embed(queries, options);
  absl::StatusOr<std::vector<Embedding>> pv = (*enc)->Embed(passages, options);
  ASSERT_TRUE(qv.ok()) << qv.status();
  ASSERT_TRUE(pv.ok()) << pv.status();
  int first = 0;
  for (size_t i = 0; i < pairs.size(); ++i) {
    size_t best = 0;
    for (size_t j = 1; j < pairs.size(); ++j) {
      if (Cosine((*qv)[i].vector, (*pv)[j].vector) > Cosine((*qv)[i].vector, (*pv)[best].vector)) best = j;
    }
    first += best == i;
    std::printf("  %s -> %s\n", queries[i].c_str(), best == i ? "its passage" : passages[best].c_str());
  }
  std::printf("%d of %zu queries rank their passage first (chance %.1f)\n", first, pairs.size(),
              1.0);
  EXPECT_GE(first, static_cast<int>(pairs.size()) * 3 / 4);
}

}  // namespace
}  // namespace neodb::encoder
