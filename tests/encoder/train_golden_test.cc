// The training forward (TrainModel<float>, no-grad and with activations)
// against the fixtures of the independent numpy reference
// (research/reference/neobert_ref.py via make_golden.py, shared with the
// inference golden tests): what training optimises is what inference
// computes. Weights are regenerated as `neodb model init` writes them.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <fstream>

#include "encoder/backend.h"
#include "encoder/checkpoint/presets.h"
#include "encoder/checkpoint/weights.h"
#include "encoder/train/train_model.h"
#include "nlohmann/json.hpp"

namespace neodb::encoder::train {
namespace {

nlohmann::json ReadFixture(const std::string& name) {
  const char* dir = std::getenv("NEODB_SOURCE_DIR");
  std::ifstream in(std::string(dir ? dir : ".") + "/tests/testdata/golden/" + name);
  EXPECT_TRUE(in.good()) << "missing fixture " << name;
  return nlohmann::json::parse(in);
}

// cosine ≥ 0.99999 and max |diff| ≤ 1e-3 · max |expected| (the inference
// golden tests' thresholds).
void ExpectMatches(const float* got, const std::vector<double>& want, const std::string& what) {
  double dot = 0, ng = 0, nw = 0, max_diff = 0, max_want = 0;
  for (size_t i = 0; i < want.size(); ++i) {
    dot += got[i] * want[i];
    ng += double(got[i]) * got[i];
    nw += want[i] * want[i];
    max_diff = std::max(max_diff, std::abs(got[i] - want[i]));
    max_want = std::max(max_want, std::abs(want[i]));
  }
  EXPECT_GE(dot / std::sqrt(ng * nw), 0.99999) << what;
  EXPECT_LE(max_diff, 1e-3 * max_want) << what;
}

void RunGolden(const std::string& fixture_name) {
  const nlohmann::json fx = ReadFixture(fixture_name);
  auto config = PresetConfig(fx["preset"].get<std::string>(), fx["vocab_size"].get<int64_t>());
  ASSERT_TRUE(config.ok()) << config.status();
  NeoBertWeights weights = RandomWeights(*config, fx["seed"].get<uint64_t>(), false);
  const float qkv_scale = fx["qkv_scale"].get<float>();
  for (LayerWeights& l : weights.layers) {
    float* p = l.qkv.data<float>();
    for (int64_t i = 0; i < l.qkv.numel(); ++i) p[i] *= qkv_scale;
  }
  const TrainParams<float> params = ParamsFromWeights(weights);
  const TrainModel<float> model(params.layout);
  const int64_t c = config->hidden_size;
  const auto sequences = fx["sequences"].get<std::vector<std::vector<int32_t>>>();
  PackedBatch all;
  all.offsets = {0};
  for (const auto& s : sequences) AppendSequence(&all, s);
  std::vector<float> mean(sequences.size() * c), cls(sequences.size() * c);
  TrainModel<float>::Activations acts;  // the training path (keeps activations)
  model.Forward(params.values.data(), all, 0, nullptr, Pooling::kMean, mean.data(), &acts);
  model.Forward(params.values.data(), all, 0, nullptr, Pooling::kCls, cls.data(), nullptr);
  for (size_t b = 0; b < sequences.size(); ++b) {
    const auto& want = fx["expected"][b];
    const std::string tag = fixture_name + " sequence " + std::to_string(b);
    ExpectMatches(mean.data() + b * c, want["mean"].get<std::vector<double>>(), tag + " mean");
    ExpectMatches(cls.data() + b * c, want["cls"].get<std::vector<double>>(), tag + " cls");
  }
}

TEST(TrainGolden, TinyMatchesTheNumpyReference) { RunGolden("neobert_tiny.json"); }
TEST(TrainGolden, TinySharpAttentionMatchesTheNumpyReference) {
  RunGolden("neobert_tiny_sharp.json");
}

// Training forward == the inference CPU backend on the same weights, for a
// packed batch (mean and [CLS] pooling).
TEST(TrainGolden, MatchesTheInferenceCpuBackend) {
  auto config = PresetConfig("tiny", 1000);
  ASSERT_TRUE(config.ok());
  auto weights = std::make_shared<const NeoBertWeights>(RandomWeights(*config, 11, false));
  const TrainParams<float> params = ParamsFromWeights(*weights);
  const TrainModel<float> model(params.layout);
  auto backend = MakeCpuBackend(weights, 1);
  PackedBatch batch;
  batch.offsets = {0};
  SplitMix64 rng(5);
  for (int len : {2, 7, 40, 130}) {
    std::vector<int32_t> ids(len);
    for (int i = 0; i < len; ++i) ids[i] = static_cast<int32_t>(rng.Next() % 1000);
    ids.front() = 101;
    ids.back() = 102;
    AppendSequence(&batch, ids);
  }
  const int64_t c = config->hidden_size;
  for (Pooling pooling : {Pooling::kMean, Pooling::kCls}) {
    std::vector<float> mine(batch.batch_size() * c);
    model.Forward(params.values.data(), batch, 0, nullptr, pooling, mine.data(), nullptr);
    auto theirs = backend->Pool(batch, pooling);
    ASSERT_TRUE(theirs.ok()) << theirs.status();
    for (int64_t b = 0; b < batch.batch_size(); ++b) {
      const float* t = theirs->data<float>() + b * c;
      ExpectMatches(mine.data() + b * c, std::vector<double>(t, t + c),
                    "sequence " + std::to_string(b));
    }
  }
}

}  // namespace
}  // namespace neodb::encoder::train
