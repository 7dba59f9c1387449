// The full-size NeoBERT architecture (NEOBERT.md §1-2): parameter counts, and
// a 1 GB F32 checkpoint that loads without copying its data. Slow (writes
// ~1 GB to the temporary directory).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fstream>

#include "encoder/checkpoint/presets.h"
#include "encoder/checkpoint/safetensors.h"
#include "encoder/checkpoint/weights.h"
#include "tests/encoder/checkpoint_test_util.h"

namespace neodb::encoder {
namespace {

// [lo, hi) ranges of every mapping of `path` in this process.
std::vector<std::pair<uintptr_t, uintptr_t>> MappingsOf(const std::string& path) {
  std::vector<std::pair<uintptr_t, uintptr_t>> out;
  std::ifstream maps("/proc/self/maps");
  std::string line;
  while (std::getline(maps, line)) {
    if (line.size() < path.size() ||
        line.compare(line.size() - path.size(), path.size(), path) != 0) {
      continue;
    }
    unsigned long lo = 0, hi = 0;
    if (std::sscanf(line.c_str(), "%lx-%lx", &lo, &hi) == 2) out.emplace_back(lo, hi);
  }
  return out;
}

TEST(CheckpointFullTest, ReleaseSizedCheckpointIsMappedNotCopied) {
  absl::StatusOr<NeoBertConfig> config = PresetConfig("full", 30522);
  ASSERT_TRUE(config.ok());
  testing::TempDir dir;
  std::string model_id;
  {
    const NeoBertWeights w = RandomWeights(*config, 1);
    EXPECT_EQ(ParameterCount(w), 245136954);  // NEOBERT.md §2, with the MLM head
    NeoBertWeights encoder_only = w;
    encoder_only.decoder_weight.reset();
    encoder_only.decoder_bias.reset();
    EXPECT_EQ(ParameterCount(encoder_only), 221665536);
    ASSERT_TRUE(SaveCheckpoint(w, dir.path()).ok());
    model_id = w.model_id;
  }
  const std::string file = dir.Sub("model.safetensors");
  absl::StatusOr<SafetensorsFile> st = SafetensorsFile::Open(file);
  ASSERT_TRUE(st.ok()) << st.status();
  EXPECT_EQ(st->tensors().size(), 172u);

  absl::StatusOr<NeoBertWeights> back = LoadCheckpoint(dir.path(), {.load_decoder = true});
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(back->model_id, model_id);
  const auto maps = MappingsOf(file);
  ASSERT_FALSE(maps.empty());
  auto mapped = [&](const Tensor& t) {
    const uintptr_t p = reinterpret_cast<uintptr_t>(t.raw_data());
    for (const auto& [lo, hi] : maps) {
      if (lo <= p && p + t.nbytes() <= hi) return true;
    }
    return false;
  };
  EXPECT_TRUE(mapped(back->embeddings));
  EXPECT_TRUE(mapped(back->final_norm));
  EXPECT_TRUE(mapped(*back->decoder_weight));
  for (const LayerWeights& l : back->layers) {
    EXPECT_TRUE(mapped(l.qkv));
    EXPECT_TRUE(mapped(l.w12));
    EXPECT_TRUE(mapped(l.w3));
  }
}

}  // namespace
}  // namespace neodb::encoder
