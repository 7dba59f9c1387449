// The BERT family: the ops its description adds (LayerNorm, bias + GELU,
// SplitQkv, positions), the checkpoint loader against hostile directories,
// the sentence-transformers defaults, and the CPU backend's packing. Numbers
// against Hugging Face transformers are in bert_golden_test.cc.
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "encoder/checkpoint/bert_weights.h"
#include "encoder/checkpoint/safetensors_writer.h"
#include "encoder/encoder.h"
#include "encoder/model.h"
#include "encoder/models/bert.h"
#include "encoder/ops/gelu.h"
#include "encoder/ops/layer_norm.h"
#include "encoder/ops/position_embedding.h"
#include "encoder/ops/split_qkv.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "tests/encoder/checkpoint_test_util.h"

namespace neodb::encoder {
namespace {

using testing::TempDir;

Tensor RandomTensor(const Shape& shape, std::mt19937& rng, float scale = 0.5f) {
  Tensor t = Tensor::Empty(shape, DType::kF32);
  std::uniform_real_distribution<float> u(-scale, scale);
  for (int64_t i = 0; i < t.numel(); ++i) t.data<float>()[i] = u(rng);
  return t;
}

void WriteText(const std::string& path, const std::string& text) {
  std::ofstream(path, std::ios::binary) << text;
}

struct TinyShape {
  int64_t hidden = 16, heads = 2, layers = 2, intermediate = 24, vocab = 40, positions = 20;
};

nlohmann::json TinyConfig(const TinyShape& s) {
  return {{"model_type", "bert"},         {"hidden_size", s.hidden},
          {"num_hidden_layers", s.layers}, {"num_attention_heads", s.heads},
          {"intermediate_size", s.intermediate}, {"vocab_size", s.vocab},
          {"max_position_embeddings", s.positions}, {"type_vocab_size", 2},
          {"layer_norm_eps", 1e-12},       {"hidden_act", "gelu"}};
}

// Every tensor BertModel.save_pretrained writes for `s` (pooler included).
std::vector<NamedTensor> TinyTensors(const TinyShape& s, uint32_t seed,
                                     const std::string& prefix = "") {
  std::mt19937 rng(seed);
  const int64_t C = s.hidden, I = s.intermediate;
  std::vector<NamedTensor> t;
  auto add = [&](const std::string& name, Shape shape) {
    t.push_back({prefix + name, RandomTensor(shape, rng)});
  };
  add("embeddings.word_embeddings.weight", {s.vocab, C});
  add("embeddings.position_embeddings.weight", {s.positions, C});
  add("embeddings.token_type_embeddings.weight", {2, C});
  add("embeddings.LayerNorm.weight", {C});
  add("embeddings.LayerNorm.bias", {C});
  for (int64_t i = 0; i < s.layers; ++i) {
    const std::string p = "encoder.layer." + std::to_string(i) + ".";
    for (const char* part : {"query", "key", "value"}) {
      add(p + "attention.self." + part + ".weight", {C, C});
      add(p + "attention.self." + part + ".bias", {C});
    }
    add(p + "attention.output.dense.weight", {C, C});
    add(p + "attention.output.dense.bias", {C});
    add(p + "attention.output.LayerNorm.weight", {C});
    add(p + "attention.output.LayerNorm.bias", {C});
    add(p + "intermediate.dense.weight", {I, C});
    add(p + "intermediate.dense.bias", {I});
    add(p + "output.dense.weight", {C, I});
    add(p + "output.dense.bias", {C});
    add(p + "output.LayerNorm.weight", {C});
    add(p + "output.LayerNorm.bias", {C});
  }
  add("pooler.dense.weight", {C, C});
  add("pooler.dense.bias", {C});
  return t;
}

std::string WriteTiny(const TempDir& tmp, const std::string& name, const nlohmann::json& config,
                      std::vector<NamedTensor> tensors, DType dtype = DType::kF32) {
  const std::string dir = tmp.MakeDir(name);
  WriteText(dir + "/config.json", config.dump());
  EXPECT_TRUE(WriteSafetensors(dir + "/model.safetensors", std::move(tensors), dtype).ok());
  return dir;
}

// ---- Ops ---------------------------------------------------------------------

TEST(BertOps, ErfIsWithinAMillionthOfStdErf) {
  double worst = 0;
  for (int i = -8000; i <= 8000; ++i) {
    const float x = static_cast<float>(i) / 1000.0f;
    worst = std::max(worst, std::abs(double(ops::cpu::Erf(x)) - std::erf(double(x))));
  }
  EXPECT_LT(worst, 1e-6);
}

TEST(BertOps, BiasGeluIsTheErfForm) {
  std::mt19937 rng(3);
  Tensor u = RandomTensor({3, 37}, rng, 6.0f);
  Tensor bias = RandomTensor({37}, rng, 1.0f);
  const Tensor before = u.Clone();
  ops::BiasGelu(bias, &u);
  for (int64_t r = 0; r < 3; ++r) {
    for (int64_t c = 0; c < 37; ++c) {
      const double v = double(before.data<float>()[r * 37 + c]) + bias.data<float>()[c];
      const double want = 0.5 * v * (1 + std::erf(v / std::sqrt(2.0)));
      EXPECT_NEAR(u.data<float>()[r * 37 + c], want, 4e-6 * std::max(1.0, std::abs(want)));
    }
  }
}

TEST(BertOps, LayerNormMatchesDoubleInPlaceAndWithBias) {
  std::mt19937 rng(5);
  const int64_t rows = 4, cols = 33;
  Tensor x = RandomTensor({rows, cols}, rng, 3.0f);
  // A large common offset: a one-pass variance would cancel it away.
  for (int64_t i = 0; i < x.numel(); ++i) x.data<float>()[i] += 100.0f;
  Tensor bias = RandomTensor({cols}, rng), gamma = RandomTensor({cols}, rng),
         beta = RandomTensor({cols}, rng);
  for (const bool with_bias : {false, true}) {
    Tensor out = x.Clone();  // in place: out aliases the input
    ops::LayerNorm(out, with_bias ? &bias : nullptr, gamma, beta, 1e-12f, &out);
    for (int64_t r = 0; r < rows; ++r) {
      std::vector<double> y(cols);
      double mean = 0;
      for (int64_t c = 0; c < cols; ++c) {
        y[c] = x.data<float>()[r * cols + c] + (with_bias ? bias.data<float>()[c] : 0.0f);
        mean += y[c] / cols;
      }
      double var = 0;
      for (int64_t c = 0; c < cols; ++c) var += (y[c] - mean) * (y[c] - mean) / cols;
      for (int64_t c = 0; c < cols; ++c) {
        const double want = (y[c] - mean) / std::sqrt(var + 1e-12) * gamma.data<float>()[c] +
                            beta.data<float>()[c];
        EXPECT_NEAR(out.data<float>()[r * cols + c], want, 1e-4) << r << "," << c;
      }
    }
  }
}

TEST(BertOps, SplitQkvAddsBiasAndGoesHeadMajor) {
  const int64_t n = 3, heads = 2, d = 4, c = heads * d;
  Tensor qkv = Tensor::Empty({n, 3 * c}, DType::kF32);
  for (int64_t i = 0; i < qkv.numel(); ++i) qkv.data<float>()[i] = static_cast<float>(i);
  Tensor bias = Tensor::Empty({3 * c}, DType::kF32);
  for (int64_t i = 0; i < 3 * c; ++i) bias.data<float>()[i] = 1000.0f * static_cast<float>(i);
  Tensor q = Tensor::Empty({heads, n, d}, DType::kF32), k = q.Clone(), v = q.Clone();
  ops::SplitQkv(qkv, bias, heads, &q, &k, &v);
  const Tensor* parts[3] = {&q, &k, &v};
  for (int part = 0; part < 3; ++part) {
    for (int64_t h = 0; h < heads; ++h) {
      for (int64_t t = 0; t < n; ++t) {
        for (int64_t e = 0; e < d; ++e) {
          const int64_t col = part * c + h * d + e;
          EXPECT_EQ(parts[part]->data<float>()[(h * n + t) * d + e],
                    qkv.data<float>()[t * 3 * c + col] + bias.data<float>()[col]);
        }
      }
    }
  }
}

TEST(BertOps, PositionsRestartInEverySequence) {
  Tensor table = Tensor::Empty({5, 2}, DType::kF32);
  for (int64_t i = 0; i < 10; ++i) table.data<float>()[i] = static_cast<float>(i);
  Tensor out = Tensor::Zeros({6, 2}, DType::kF32);
  ops::AddPositionEmbedding(table, {0, 2, 6}, &out);
  const float want[12] = {0, 1, 2, 3, 0, 1, 2, 3, 4, 5, 6, 7};
  for (int i = 0; i < 12; ++i) EXPECT_EQ(out.data<float>()[i], want[i]) << i;
}

// ---- Loader ------------------------------------------------------------------

TEST(BertLoader, LoadsWithOrWithoutThePrefixToTheSameModel) {
  TempDir tmp;
  const TinyShape s;
  const std::string plain = WriteTiny(tmp, "plain", TinyConfig(s), TinyTensors(s, 1));
  const std::string prefixed =
      WriteTiny(tmp, "prefixed", TinyConfig(s), TinyTensors(s, 1, "bert."));
  auto a = LoadBertCheckpoint(plain);
  auto b = LoadBertCheckpoint(prefixed);
  ASSERT_TRUE(a.ok()) << a.status();
  ASSERT_TRUE(b.ok()) << b.status();
  EXPECT_EQ(a->model_id, b->model_id);
  EXPECT_EQ(a->model_id.rfind("bert-", 0), 0u);
  EXPECT_EQ(a->layers.size(), 2u);
  EXPECT_EQ(a->layers[0].qkv.shape(), (Shape{48, 16}));
  // Other weights, another id.
  const std::string other = WriteTiny(tmp, "other", TinyConfig(s), TinyTensors(s, 2));
  EXPECT_NE(LoadBertCheckpoint(other)->model_id, a->model_id);
  // The dispatcher picks the BERT loader from model_type.
  auto m = LoadModel(plain);
  ASSERT_TRUE(m.ok()) << m.status();
  EXPECT_EQ((*m)->architecture(), Architecture::kBert);
  EXPECT_EQ((*m)->model_id(), a->model_id);
  EXPECT_EQ((*m)->max_length(), 20);
}

// A hostile or foreign directory is refused with a message naming the problem.
TEST(BertLoader, RefusesWhatItCannotRun) {
  TempDir tmp;
  const TinyShape s;
  struct Case {
    std::string name;
    nlohmann::json config;
    std::vector<NamedTensor> tensors;
    std::string error;
  };
  std::vector<Case> cases;
  {
    auto c = TinyConfig(s);
    c["hidden_act"] = "relu";
    cases.push_back({"relu", c, TinyTensors(s, 1), "hidden_act"});
  }
  {
    auto c = TinyConfig(s);
    c["position_embedding_type"] = "relative_key";
    cases.push_back({"relative", c, TinyTensors(s, 1), "position_embedding_type"});
  }
  {
    auto c = TinyConfig(s);
    c["num_attention_heads"] = 3;
    cases.push_back({"heads", c, TinyTensors(s, 1), "divisible"});
  }
  {
    auto c = TinyConfig(s);
    c["hidden_size"] = "16";
    cases.push_back({"string", c, TinyTensors(s, 1), "must be an integer"});
  }
  {
    auto c = TinyConfig(s);
    c.erase("max_position_embeddings");
    cases.push_back({"nopos", c, TinyTensors(s, 1), "max_position_embeddings"});
  }
  {
    auto t = TinyTensors(s, 1);
    t.erase(t.begin() + 6);  // encoder.layer.0.attention.self.query.bias
    cases.push_back({"missing", TinyConfig(s), t, "missing tensor"});
  }
  {
    auto t = TinyTensors(s, 1);
    t[0].tensor = Tensor::Zeros({s.vocab + 1, s.hidden}, DType::kF32);
    cases.push_back({"shape", TinyConfig(s), t, "has shape"});
  }
  {
    auto t = TinyTensors(s, 1);
    t.push_back({"encoder.layer.9.extra.weight", Tensor::Zeros({2}, DType::kF32)});
    cases.push_back({"extra", TinyConfig(s), t, "unexpected tensor"});
  }
  for (Case& c : cases) {
    const std::string dir = WriteTiny(tmp, c.name, c.config, std::move(c.tensors));
    auto w = LoadBertCheckpoint(dir);
    ASSERT_FALSE(w.ok()) << c.name;
    EXPECT_NE(std::string(w.status().message()).find(c.error), std::string::npos)
        << c.name << ": " << w.status();
  }
  // A model_type neodb does not run.
  const std::string roberta = tmp.MakeDir("roberta");
  WriteText(roberta + "/config.json", R"({"model_type": "roberta"})");
  auto r = LoadModel(roberta);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(std::string(r.status().message()).find("\"roberta\""), std::string::npos);
  WriteText(roberta + "/config.json", "{not json");
  EXPECT_FALSE(LoadModel(roberta).ok());
}

// ---- sentence-transformers defaults -------------------------------------------

TEST(BertDefaults, ReadsPoolingNormalizeAndPrompts) {
  TempDir tmp;
  const std::string none = tmp.MakeDir("none");
  auto d = LoadModelDefaults(none);
  ASSERT_TRUE(d.ok());
  EXPECT_EQ(d->pooling, Pooling::kMean);
  EXPECT_FALSE(d->normalize);

  const std::string st = tmp.MakeDir("st");
  WriteText(st + "/modules.json", R"([
    {"idx": 0, "name": "0", "path": "", "type": "sentence_transformers.models.Transformer"},
    {"idx": 1, "name": "1", "path": "1_Pool", "type": "sentence_transformers.models.Pooling"},
    {"idx": 2, "name": "2", "path": "2_Normalize", "type": "sentence_transformers.models.Normalize"}])");
  tmp.MakeDir("st/1_Pool");
  WriteText(st + "/1_Pool/config.json",
            R"({"pooling_mode_cls_token": true, "pooling_mode_mean_tokens": false})");
  WriteText(st + "/config_sentence_transformers.json",
            R"({"prompts": {"query": "query: ", "passage": "passage: "}})");
  WriteText(st + "/sentence_bert_config.json", R"({"max_seq_length": 256, "do_lower_case": false})");
  d = LoadModelDefaults(st);
  ASSERT_TRUE(d.ok()) << d.status();
  EXPECT_EQ(d->pooling, Pooling::kCls);
  EXPECT_TRUE(d->normalize);
  EXPECT_EQ(d->query_prefix, "query: ");
  EXPECT_EQ(d->document_prefix, "passage: ");
  EXPECT_EQ(d->max_length, 256);
  EXPECT_EQ(d->hybrid_fusion, "");  // no neodb_model.json: the engine decides

  WriteText(st + "/neodb_model.json",
            R"({"hybrid": {"fusion": "weighted", "alpha": 0.5}, "measured": {"scifact": 0.73}})");
  d = LoadModelDefaults(st);
  ASSERT_TRUE(d.ok()) << d.status();
  EXPECT_EQ(d->hybrid_fusion, "weighted");
  EXPECT_DOUBLE_EQ(d->hybrid_alpha, 0.5);
  for (const char* bad : {R"({"hybrid": {"alpha": 1.5}})", R"({"hybrid": {"alpha": "0.5"}})",
                          R"({"hybrid": {"fusion": 3}})", R"({"hybrid": []})", "[]", "{x"}) {
    WriteText(st + "/neodb_model.json", bad);
    EXPECT_FALSE(LoadModelDefaults(st).ok()) << bad;
  }
  std::filesystem::remove(st + "/neodb_model.json");

  WriteText(st + "/1_Pool/config.json", R"({"pooling_mode_max_tokens": true})");
  EXPECT_FALSE(LoadModelDefaults(st).ok());
  WriteText(st + "/1_Pool/config.json", R"({"pooling_mode": "lasttoken"})");
  EXPECT_FALSE(LoadModelDefaults(st).ok());
  WriteText(st + "/modules.json",
            R"([{"path": "../x", "type": "sentence_transformers.models.Pooling"}])");
  EXPECT_FALSE(LoadModelDefaults(st).ok());
  WriteText(st + "/modules.json", R"([{"path": "", "type": "sentence_transformers.models.Dense"}])");
  auto dense = LoadModelDefaults(st);
  ASSERT_FALSE(dense.ok());
  EXPECT_NE(std::string(dense.status().message()).find("Dense"), std::string::npos);
}

// ---- Backend -----------------------------------------------------------------

// A packed batch computes each sequence as it would alone; F16 storage loads.
TEST(BertBackend, PackedEqualsAloneAndChecksInput) {
  TempDir tmp;
  const TinyShape s;
  const std::string dir = WriteTiny(tmp, "m", TinyConfig(s), TinyTensors(s, 7));
  auto w = LoadBertCheckpoint(dir);
  ASSERT_TRUE(w.ok()) << w.status();
  BertCpuBackend backend(std::make_shared<const BertWeights>(*std::move(w)), 1);
  const std::vector<std::vector<int32_t>> seqs = {{2, 5, 9, 3}, {2, 3}, {2, 7, 7, 7, 7, 7, 8, 3}};
  PackedBatch all;
  for (const auto& q : seqs) all.Add(q);
  auto packed = backend.HiddenStates(all);
  ASSERT_TRUE(packed.ok());
  for (size_t b = 0; b < seqs.size(); ++b) {
    PackedBatch one;
    one.Add(seqs[b]);
    auto alone = backend.HiddenStates(one);
    ASSERT_TRUE(alone.ok());
    for (int64_t i = 0; i < alone->numel(); ++i) {
      EXPECT_NEAR(alone->data<float>()[i],
                  packed->data<float>()[all.offsets[b] * s.hidden + i], 1e-5);
    }
  }
  PackedBatch too_long;
  too_long.Add(std::vector<int32_t>(s.positions + 1, 4));
  EXPECT_FALSE(backend.HiddenStates(too_long).ok());
  PackedBatch bad_id;
  bad_id.Add({2, static_cast<int32_t>(s.vocab), 3});
  EXPECT_FALSE(backend.HiddenStates(bad_id).ok());

  const std::string f16 = WriteTiny(tmp, "f16", TinyConfig(s), TinyTensors(s, 7), DType::kF16);
  auto w16 = LoadBertCheckpoint(f16);
  ASSERT_TRUE(w16.ok()) << w16.status();
  BertCpuBackend half(std::make_shared<const BertWeights>(*std::move(w16)), 1);
  auto h = half.HiddenStates(all);
  ASSERT_TRUE(h.ok());
  double dot = 0, na = 0, nb = 0;
  for (int64_t i = 0; i < h->numel(); ++i) {
    dot += double(h->data<float>()[i]) * packed->data<float>()[i];
    na += double(h->data<float>()[i]) * h->data<float>()[i];
    nb += double(packed->data<float>()[i]) * packed->data<float>()[i];
  }
  EXPECT_GT(dot / std::sqrt(na * nb), 0.999);
}

}  // namespace
}  // namespace neodb::encoder
