#pragma once
// Shared by the golden tests: the CPU backend against fixtures computed by the independent numpy
// reference (research/reference/neobert_ref.py, via make_golden.py). The
// checkpoint is regenerated here exactly as `neodb model init` writes it:
// RandomWeights(PresetConfig(preset, vocab_size), seed) → SaveCheckpoint →
// LoadCheckpoint, so the file path is exercised too. Every sequence runs
// alone and inside one packed batch with the others.
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "encoder/backend.h"
#include "encoder/checkpoint/presets.h"
#include "encoder/checkpoint/weights.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"

namespace neodb::encoder::golden {

namespace fs = std::filesystem;

inline std::string SourceDir() {
  const char* dir = std::getenv("NEODB_SOURCE_DIR");
  return dir ? dir : ".";
}

inline nlohmann::json ReadFixture(const std::string& name) {
  std::ifstream in(SourceDir() + "/tests/testdata/golden/" + name);
  EXPECT_TRUE(in.good()) << "missing fixture " << name;
  return nlohmann::json::parse(in);
}

// The worst agreement seen by ExpectMatches, printed per fixture so the
// margin under the thresholds is visible in the test log.
struct Worst {
  double cosine = 1, diff_ratio = 0;
};
inline Worst& WorstSeen() {
  static Worst w;
  return w;
}

// Asserts cosine ≥ 0.99999 and max |diff| ≤ 1e-3 · max |expected|.
inline void ExpectMatches(const float* got, const std::vector<double>& want,
                          const std::string& what) {
  double dot = 0, ng = 0, nw = 0, max_diff = 0, max_want = 0;
  for (size_t i = 0; i < want.size(); ++i) {
    dot += got[i] * want[i];
    ng += double(got[i]) * got[i];
    nw += want[i] * want[i];
    max_diff = std::max(max_diff, std::abs(got[i] - want[i]));
    max_want = std::max(max_want, std::abs(want[i]));
  }
  const double cosine = dot / std::sqrt(ng * nw);
  WorstSeen().cosine = std::min(WorstSeen().cosine, cosine);
  WorstSeen().diff_ratio = std::max(WorstSeen().diff_ratio, max_diff / max_want);
  EXPECT_GE(cosine, 0.99999) << what;
  EXPECT_LE(max_diff, 1e-3 * max_want) << what << " (max |expected| " << max_want << ")";
}

class TempDir {
 public:
  TempDir() {
    std::string tmpl = (fs::temp_directory_path() / "neodb-golden-XXXXXX").string();
    NEODB_CHECK(mkdtemp(tmpl.data()) != nullptr);
    path_ = tmpl;
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

inline void RunGolden(const std::string& fixture_name) {
  WorstSeen() = Worst{};
  const nlohmann::json fx = ReadFixture(fixture_name);
  auto config = PresetConfig(fx["preset"].get<std::string>(), fx["vocab_size"].get<int64_t>());
  ASSERT_TRUE(config.ok()) << config.status();
  NeoBertWeights generated =
      RandomWeights(*config, fx["seed"].get<uint64_t>(), /*with_decoder=*/false);
  const float qkv_scale = fx["qkv_scale"].get<float>();
  if (qkv_scale != 1.0f) {  // a power of two: exact, as in make_golden.py
    for (LayerWeights& l : generated.layers) {
      float* p = l.qkv.data<float>();
      for (int64_t i = 0; i < l.qkv.numel(); ++i) p[i] *= qkv_scale;
    }
  }
  TempDir dir;
  ASSERT_TRUE(SaveCheckpoint(generated, dir.path()).ok());
  auto loaded = LoadCheckpoint(dir.path());
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  auto weights = std::make_shared<const NeoBertWeights>(*std::move(loaded));
  auto backend = MakeCpuBackend(weights, 1);
  const int64_t c = weights->config.hidden_size;

  const auto sequences = fx["sequences"].get<std::vector<std::vector<int32_t>>>();
  const auto& expected = fx["expected"];
  PackedBatch all;
  for (const auto& s : sequences) all.Add(s);
  auto batch_hidden = backend->HiddenStates(all);
  ASSERT_TRUE(batch_hidden.ok()) << batch_hidden.status();
  auto batch_mean = backend->Pool(all, Pooling::kMean);
  ASSERT_TRUE(batch_mean.ok());

  // Three forward passes in all (the full-size case is slow): the batch's
  // hidden states (→ [CLS] rows and hidden rows), the batch's mean pooling,
  // and each sequence alone through Pool(kCls).
  for (size_t b = 0; b < sequences.size(); ++b) {
    const auto& want = expected[b];
    const std::string tag = fixture_name + " sequence " + std::to_string(b) + " (" +
                            std::to_string(sequences[b].size()) + " tokens)";
    PackedBatch alone;
    alone.Add(sequences[b]);
    auto cls = backend->Pool(alone, Pooling::kCls);
    ASSERT_TRUE(cls.ok());
    const auto want_cls = want["cls"].get<std::vector<double>>();
    const auto want_mean = want["mean"].get<std::vector<double>>();
    ASSERT_EQ(static_cast<int64_t>(want_cls.size()), c);
    ExpectMatches(cls->data<float>(), want_cls, tag + " cls alone");
    ExpectMatches(batch_hidden->data<float>() + all.offsets[b] * c, want_cls,
                  tag + " cls in batch");
    ExpectMatches(batch_mean->data<float>() + b * c, want_mean, tag + " mean in batch");
    for (const auto& row : want["hidden_rows"]) {
      const int64_t r = row["row"].get<int64_t>();
      ExpectMatches(batch_hidden->data<float>() + (all.offsets[b] + r) * c,
                    row["values"].get<std::vector<double>>(),
                    tag + " hidden row " + std::to_string(r));
    }
  }
  std::printf("%s: worst cosine %.9f, worst max|diff|/max|expected| %.3g\n", fixture_name.c_str(),
              WorstSeen().cosine, WorstSeen().diff_ratio);
}

}  // namespace neodb::encoder::golden
