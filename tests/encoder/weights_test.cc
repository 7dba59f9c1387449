#include "encoder/checkpoint/weights.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <zstd.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "encoder/checkpoint/presets.h"
#include "encoder/checkpoint/safetensors.h"
#include "encoder/checkpoint/safetensors_writer.h"
#include "tests/encoder/checkpoint_test_util.h"

namespace neodb::encoder {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;
using ::testing::MatchesRegex;
using testing::TempDir;

NeoBertConfig Tiny(int64_t vocab = 100) { return *PresetConfig("tiny", vocab); }

uint32_t Bits(float f) {
  uint32_t b;
  std::memcpy(&b, &f, 4);
  return b;
}

bool BitEqual(const Tensor& a, const Tensor& b) {
  return a.shape() == b.shape() && a.dtype() == b.dtype() &&
         std::memcmp(a.raw_data(), b.raw_data(), a.nbytes()) == 0;
}

// Every tensor of `w` converted through `dtype` and back (what a save in that
// dtype stores).
NeoBertWeights RoundedThrough(const NeoBertWeights& w, DType dtype) {
  NeoBertWeights r = w;
  auto round = [dtype](const Tensor& t) {
    Tensor out = Tensor::Empty(t.shape(), DType::kF32);
    for (int64_t i = 0; i < t.numel(); ++i) {
      const float v = t.data<float>()[i];
      out.data<float>()[i] = dtype == DType::kF16    ? F16ToF32(F32ToF16(v))
                             : dtype == DType::kBF16 ? BF16ToF32(F32ToBF16(v))
                                                     : v;
    }
    return out;
  };
  r.embeddings = round(w.embeddings);
  for (size_t i = 0; i < w.layers.size(); ++i) {
    const LayerWeights& l = w.layers[i];
    r.layers[i] = {round(l.attention_norm), round(l.qkv), round(l.wo),
                   round(l.ffn_norm),       round(l.w12), round(l.w3)};
  }
  r.final_norm = round(w.final_norm);
  if (w.decoder_weight) r.decoder_weight = round(*w.decoder_weight);
  if (w.decoder_bias) r.decoder_bias = round(*w.decoder_bias);
  r.model_id = ComputeModelId(r);
  return r;
}

void ExpectSameWeights(const NeoBertWeights& a, const NeoBertWeights& b) {
  EXPECT_TRUE(BitEqual(a.embeddings, b.embeddings));
  ASSERT_EQ(a.layers.size(), b.layers.size());
  for (size_t i = 0; i < a.layers.size(); ++i) {
    EXPECT_TRUE(BitEqual(a.layers[i].attention_norm, b.layers[i].attention_norm)) << i;
    EXPECT_TRUE(BitEqual(a.layers[i].qkv, b.layers[i].qkv)) << i;
    EXPECT_TRUE(BitEqual(a.layers[i].wo, b.layers[i].wo)) << i;
    EXPECT_TRUE(BitEqual(a.layers[i].ffn_norm, b.layers[i].ffn_norm)) << i;
    EXPECT_TRUE(BitEqual(a.layers[i].w12, b.layers[i].w12)) << i;
    EXPECT_TRUE(BitEqual(a.layers[i].w3, b.layers[i].w3)) << i;
  }
  EXPECT_TRUE(BitEqual(a.final_norm, b.final_norm));
  EXPECT_EQ(a.model_id, b.model_id);
}

TEST(RandomWeightsTest, ShapesAndRanges) {
  const NeoBertConfig c = Tiny();
  const NeoBertWeights w = RandomWeights(c, 7);
  ASSERT_TRUE(CheckWeights(w).ok()) << CheckWeights(w);
  EXPECT_EQ(w.embeddings.shape(), (Shape{100, 64}));
  EXPECT_EQ(w.layers[1].qkv.shape(), (Shape{192, 64}));
  EXPECT_EQ(w.layers[1].w12.shape(), (Shape{256, 64}));
  EXPECT_EQ(w.layers[1].w3.shape(), (Shape{64, 128}));
  double sum = 0;
  for (int64_t i = 0; i < w.layers[0].w12.numel(); ++i) {
    const float v = w.layers[0].w12.data<float>()[i];
    ASSERT_GE(v, -0.02f);
    ASSERT_LT(v, 0.02f);
    sum += v;
  }
  EXPECT_NEAR(sum / w.layers[0].w12.numel(), 0.0, 0.001);
  for (int64_t i = 0; i < 64; ++i) {
    EXPECT_EQ(w.layers[0].attention_norm.data<float>()[i], 1.0f);
    EXPECT_EQ(w.layers[1].ffn_norm.data<float>()[i], 1.0f);
    EXPECT_EQ(w.final_norm.data<float>()[i], 1.0f);
  }
  ASSERT_TRUE(w.decoder_weight && w.decoder_bias);
  for (int64_t i = 0; i < 100; ++i) EXPECT_EQ(w.decoder_bias->data<float>()[i], 0.0f);
  EXPECT_THAT(w.model_id, MatchesRegex("nb-[0-9a-f]{16}"));
  EXPECT_FALSE(RandomWeights(c, 7, /*with_decoder=*/false).decoder_weight.has_value());
  EXPECT_EQ(ParameterCount(w),
            100 * 64 * 2 + 100 + 2 * (64 * 2 + 192 * 64 + 64 * 64 + 256 * 64 + 64 * 128) + 64);
}

// Hard-coded values: a change of platform, compiler or PRNG that alters the
// initialisation (and so every model_id) fails here.
TEST(RandomWeightsTest, DeterministicForSeedOne) {
  const NeoBertWeights w = RandomWeights(Tiny(100), 1);
  const uint32_t emb[] = {0x3c684742, 0x3c549d85, 0xbc313085, 0x3c9513df};
  const uint32_t qkv0[] = {0x3c8f830f, 0x3c967b01, 0x3c26b7dc, 0xbc132f36};
  const uint32_t w3_1[] = {0x3aca167b, 0x3c6a9e2e, 0x3c5940ca, 0x3b841feb};
  const uint32_t dec[] = {0x3bd5fdbd, 0x3c7344e6, 0xbc8ceb0e, 0xbc9b9285};
  for (int i = 0; i < 4; ++i) {
    EXPECT_EQ(Bits(w.embeddings.data<float>()[i]), emb[i]) << i;
    EXPECT_EQ(Bits(w.layers[0].qkv.data<float>()[i]), qkv0[i]) << i;
    EXPECT_EQ(Bits(w.layers[1].w3.data<float>()[i]), w3_1[i]) << i;
    EXPECT_EQ(Bits(w.decoder_weight->data<float>()[i]), dec[i]) << i;
  }
  EXPECT_FLOAT_EQ(w.embeddings.data<float>()[0], 0.0141771454f);
  EXPECT_EQ(w.model_id, "nb-243bdb0aa77ea2be");
}

TEST(RandomWeightsTest, StreamsArePerTensor) {
  // A tensor's values depend on (seed, name) only: layer 0 of a 3-layer
  // model equals layer 0 of a 2-layer one; a bigger vocab extends the
  // embedding stream.
  NeoBertConfig three = Tiny(100);
  three.num_hidden_layers = 3;
  const NeoBertWeights a = RandomWeights(Tiny(100), 5);
  const NeoBertWeights b = RandomWeights(three, 5);
  EXPECT_TRUE(BitEqual(a.layers[0].qkv, b.layers[0].qkv));
  EXPECT_TRUE(BitEqual(a.layers[1].w12, b.layers[1].w12));
  EXPECT_FALSE(BitEqual(a.layers[0].qkv.Rows(0, 64), a.layers[1].qkv.Rows(0, 64)));
  EXPECT_NE(a.model_id, b.model_id);
  const NeoBertWeights big = RandomWeights(Tiny(200), 5);
  EXPECT_EQ(std::memcmp(big.embeddings.raw_data(), a.embeddings.raw_data(), a.embeddings.nbytes()),
            0);

  const NeoBertWeights again = RandomWeights(Tiny(100), 5);
  ExpectSameWeights(a, again);
  EXPECT_NE(RandomWeights(Tiny(100), 6).model_id, a.model_id);
}

TEST(CheckpointTest, RoundTripF32) {
  TempDir dir;
  const NeoBertWeights w = RandomWeights(Tiny(), 1);
  ASSERT_TRUE(SaveCheckpoint(w, dir.path()).ok());
  absl::StatusOr<NeoBertWeights> back = LoadCheckpoint(dir.path(), {.load_decoder = true});
  ASSERT_TRUE(back.ok()) << back.status();
  ExpectSameWeights(w, *back);
  ASSERT_TRUE(back->decoder_weight && back->decoder_bias);
  EXPECT_TRUE(BitEqual(*w.decoder_weight, *back->decoder_weight));
  EXPECT_TRUE(BitEqual(*w.decoder_bias, *back->decoder_bias));
  EXPECT_EQ(back->config.ToJson(), w.config.ToJson());

  // The decoder is skipped unless asked for; the id ignores it.
  absl::StatusOr<NeoBertWeights> bare = LoadCheckpoint(dir.path());
  ASSERT_TRUE(bare.ok()) << bare.status();
  EXPECT_FALSE(bare->decoder_weight.has_value());
  EXPECT_FALSE(bare->decoder_bias.has_value());
  EXPECT_EQ(bare->model_id, w.model_id);

  // Stored names carry the "model." prefix, the head does not.
  absl::StatusOr<SafetensorsFile> f = SafetensorsFile::Open(dir.Sub("model.safetensors"));
  ASSERT_TRUE(f.ok());
  EXPECT_NE(f->Find("model.encoder.weight"), nullptr);
  EXPECT_NE(f->Find("model.transformer_encoder.1.ffn.w12.weight"), nullptr);
  EXPECT_NE(f->Find("model.layer_norm.weight"), nullptr);
  EXPECT_NE(f->Find("decoder.weight"), nullptr);
  EXPECT_EQ(f->tensors().size(), 1u + 2 * 6 + 1 + 2);
  EXPECT_EQ(f->metadata().at("format"), "pt");
  // No temporary files left behind.
  int entries = 0;
  for (const auto& e : std::filesystem::directory_iterator(dir.path())) {
    ++entries;
    EXPECT_THAT(e.path().filename().string(), ::testing::AnyOf("config.json", "model.safetensors"));
  }
  EXPECT_EQ(entries, 2);
}

TEST(CheckpointTest, RoundTripHalfPrecision) {
  const NeoBertWeights w = RandomWeights(Tiny(), 3);
  for (DType dtype : {DType::kF16, DType::kBF16}) {
    SCOPED_TRACE(DTypeName(dtype));
    TempDir dir;
    ASSERT_TRUE(SaveCheckpoint(w, dir.path(), {.dtype = dtype}).ok());
    std::ifstream cfg(dir.Sub("config.json"));
    std::stringstream ss;
    ss << cfg.rdbuf();
    EXPECT_THAT(ss.str(), HasSubstr(dtype == DType::kF16 ? "\"float16\"" : "\"bfloat16\""));
    absl::StatusOr<SafetensorsFile> f = SafetensorsFile::Open(dir.Sub("model.safetensors"));
    ASSERT_TRUE(f.ok());
    EXPECT_EQ(f->Find("model.encoder.weight")->dtype_name, DTypeName(dtype));

    absl::StatusOr<NeoBertWeights> back = LoadCheckpoint(dir.path(), {.load_decoder = true});
    ASSERT_TRUE(back.ok()) << back.status();
    EXPECT_EQ(back->embeddings.dtype(), DType::kF32);
    const NeoBertWeights expected = RoundedThrough(w, dtype);
    ExpectSameWeights(expected, *back);
    EXPECT_TRUE(BitEqual(*expected.decoder_weight, *back->decoder_weight));
    EXPECT_NE(back->model_id, w.model_id);  // the values changed

    // Stable across another save/load in the same dtype (rounding is idempotent).
    TempDir dir2;
    ASSERT_TRUE(SaveCheckpoint(*back, dir2.path(), {.dtype = dtype}).ok());
    absl::StatusOr<NeoBertWeights> again = LoadCheckpoint(dir2.path());
    ASSERT_TRUE(again.ok()) << again.status();
    EXPECT_EQ(again->model_id, back->model_id);
  }
}

// A bare-encoder checkpoint: names without "model.", no decoder.
TEST(CheckpointTest, LoadsNamesWithoutPrefix) {
  TempDir dir;
  const NeoBertWeights w = RandomWeights(Tiny(), 9, /*with_decoder=*/false);
  std::vector<NamedTensor> tensors;
  const std::vector<std::string> names = EncoderTensorNames(2);
  ASSERT_EQ(names.size(), 14u);
  EXPECT_EQ(names.front(), "encoder.weight");
  EXPECT_EQ(names[1], "transformer_encoder.0.attention_norm.weight");
  EXPECT_EQ(names.back(), "layer_norm.weight");
  tensors.push_back({"encoder.weight", w.embeddings});
  for (int i = 0; i < 2; ++i) {
    const std::string p = "transformer_encoder." + std::to_string(i) + ".";
    tensors.push_back({p + "attention_norm.weight", w.layers[i].attention_norm});
    tensors.push_back({p + "qkv.weight", w.layers[i].qkv});
    tensors.push_back({p + "wo.weight", w.layers[i].wo});
    tensors.push_back({p + "ffn_norm.weight", w.layers[i].ffn_norm});
    tensors.push_back({p + "ffn.w12.weight", w.layers[i].w12});
    tensors.push_back({p + "ffn.w3.weight", w.layers[i].w3});
  }
  tensors.push_back({"layer_norm.weight", w.final_norm});
  ASSERT_TRUE(WriteSafetensors(dir.Sub("model.safetensors"), tensors, DType::kF32).ok());
  testing::WriteBytes(dir.Sub("config.json"), w.config.ToJson());

  absl::StatusOr<NeoBertWeights> back = LoadCheckpoint(dir.path());
  ASSERT_TRUE(back.ok()) << back.status();
  ExpectSameWeights(w, *back);

  absl::StatusOr<NeoBertWeights> with_head = LoadCheckpoint(dir.path(), {.load_decoder = true});
  ASSERT_FALSE(with_head.ok());
  EXPECT_EQ(with_head.status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(std::string(with_head.status().message()), HasSubstr("decoder.weight"));
}

// The shipped form: model.safetensors.zst loads exactly as the file it was
// compressed from (same tensors, same model_id); both at once is ambiguous.
TEST(CheckpointTest, LoadsZstdCompressedWeights) {
  TempDir dir;
  const std::string plain = dir.MakeDir("plain"), zst = dir.MakeDir("zst");
  ASSERT_TRUE(SaveCheckpoint(RandomWeights(Tiny(), 4), plain, {.dtype = DType::kF16}).ok());
  std::filesystem::copy_file(plain + "/config.json", zst + "/config.json");
  const std::string bytes = testing::ReadBytes(plain + "/model.safetensors");
  std::string compressed(ZSTD_compressBound(bytes.size()), '\0');
  const size_t n =
      ZSTD_compress(compressed.data(), compressed.size(), bytes.data(), bytes.size(), 3);
  ASSERT_FALSE(ZSTD_isError(n)) << ZSTD_getErrorName(n);
  compressed.resize(n);
  testing::WriteBytes(zst + "/model.safetensors.zst", compressed);

  EXPECT_EQ(*WeightsFilePath(plain), plain + "/model.safetensors");
  EXPECT_EQ(*WeightsFilePath(zst), zst + "/model.safetensors.zst");
  EXPECT_EQ(*WeightsFilePath(dir.path()), dir.Sub("model.safetensors"));  // neither: the usual name
  absl::StatusOr<NeoBertWeights> a = LoadCheckpoint(plain, {.load_decoder = true});
  absl::StatusOr<NeoBertWeights> b = LoadCheckpoint(zst, {.load_decoder = true});
  ASSERT_TRUE(a.ok()) << a.status();
  ASSERT_TRUE(b.ok()) << b.status();
  ExpectSameWeights(*a, *b);  // model_id included
  EXPECT_TRUE(BitEqual(*a->decoder_weight, *b->decoder_weight));
  EXPECT_TRUE(BitEqual(*a->decoder_bias, *b->decoder_bias));

  testing::WriteBytes(plain + "/model.safetensors.zst", compressed);
  absl::StatusOr<NeoBertWeights> both = LoadCheckpoint(plain);
  ASSERT_FALSE(both.ok());
  EXPECT_EQ(both.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(both.status().message()),
              AllOf(HasSubstr(plain), HasSubstr("both model.safetensors and model.safetensors.zst")));
}

// Loading F32 borrows the file mapping: the embedding data lives inside a
// mapping of model.safetensors (read from /proc/self/maps).
TEST(CheckpointTest, F32IsMappedNotCopied) {
  TempDir dir;
  ASSERT_TRUE(SaveCheckpoint(RandomWeights(Tiny(), 1), dir.path()).ok());
  absl::StatusOr<NeoBertWeights> w = LoadCheckpoint(dir.path());
  ASSERT_TRUE(w.ok()) << w.status();
  const uintptr_t emb = reinterpret_cast<uintptr_t>(w->embeddings.raw_data());
  const uintptr_t w3 = reinterpret_cast<uintptr_t>(w->layers[1].w3.raw_data());
  std::ifstream maps("/proc/self/maps");
  std::string line;
  bool emb_mapped = false, w3_mapped = false;
  while (std::getline(maps, line)) {
    if (line.find(dir.Sub("model.safetensors")) == std::string::npos) continue;
    uintptr_t lo = 0, hi = 0;
    ASSERT_EQ(std::sscanf(line.c_str(), "%lx-%lx", &lo, &hi), 2);
    emb_mapped |= lo <= emb && emb < hi;
    w3_mapped |= lo <= w3 && w3 < hi;
  }
  EXPECT_TRUE(emb_mapped);
  EXPECT_TRUE(w3_mapped);
}

// ---- Rejections: each names the problem. -----------------------------------

class CheckpointErrorTest : public ::testing::Test {
 protected:
  void SetUp() override {
    w_ = RandomWeights(Tiny(), 2);
    for (const std::string& n : EncoderTensorNames(2)) {
      tensors_.push_back({"model." + n, *Find(n)});
    }
    tensors_.push_back({"decoder.weight", *w_.decoder_weight});
    tensors_.push_back({"decoder.bias", *w_.decoder_bias});
  }

  const Tensor* Find(const std::string& name) {
    if (name == "encoder.weight") return &w_.embeddings;
    if (name == "layer_norm.weight") return &w_.final_norm;
    for (int i = 0; i < 2; ++i) {
      const std::string p = "transformer_encoder." + std::to_string(i) + ".";
      const LayerWeights& l = w_.layers[i];
      if (name == p + "attention_norm.weight") return &l.attention_norm;
      if (name == p + "qkv.weight") return &l.qkv;
      if (name == p + "wo.weight") return &l.wo;
      if (name == p + "ffn_norm.weight") return &l.ffn_norm;
      if (name == p + "ffn.w12.weight") return &l.w12;
      if (name == p + "ffn.w3.weight") return &l.w3;
    }
    return nullptr;
  }

  void Erase(const std::string& name) {
    std::erase_if(tensors_, [&](const NamedTensor& t) { return t.name == name; });
  }
  void Set(const std::string& name, Tensor t) {
    for (NamedTensor& nt : tensors_) {
      if (nt.name == name) nt.tensor = t;
    }
  }

  // Writes the checkpoint and returns LoadCheckpoint's error ("" if OK).
  std::string LoadError(const LoadOptions& options = {}) {
    EXPECT_TRUE(WriteSafetensors(dir_.Sub("model.safetensors"), tensors_, DType::kF32).ok());
    if (write_config_) testing::WriteBytes(dir_.Sub("config.json"), w_.config.ToJson());
    absl::StatusOr<NeoBertWeights> r = LoadCheckpoint(dir_.path(), options);
    return r.ok() ? "" : std::string(r.status().message());
  }

  TempDir dir_;
  NeoBertWeights w_;
  std::vector<NamedTensor> tensors_;
  bool write_config_ = true;
};

TEST_F(CheckpointErrorTest, ValidBaseline) { EXPECT_EQ(LoadError({.load_decoder = true}), ""); }

TEST_F(CheckpointErrorTest, MissingTensor) {
  Erase("model.transformer_encoder.1.wo.weight");
  Erase("model.layer_norm.weight");
  EXPECT_THAT(LoadError(),
              AllOf(HasSubstr("missing tensors"), HasSubstr("\"transformer_encoder.1.wo.weight\""),
                    HasSubstr("\"layer_norm.weight\"")));
}

TEST_F(CheckpointErrorTest, WrongShape) {
  Set("model.transformer_encoder.0.ffn.w3.weight", Tensor::Zeros({64, 192}, DType::kF32));
  EXPECT_THAT(LoadError(), AllOf(HasSubstr("\"model.transformer_encoder.0.ffn.w3.weight\""),
                                 HasSubstr("[64, 192]"), HasSubstr("[64, 128]")));
}

TEST_F(CheckpointErrorTest, VocabMismatch) {
  Set("model.encoder.weight", Tensor::Zeros({99, 64}, DType::kF32));
  EXPECT_THAT(LoadError(), AllOf(HasSubstr("99 rows"), HasSubstr("vocab_size 100")));
}

TEST_F(CheckpointErrorTest, ExtraTensor) {
  tensors_.push_back({"model.position_embeddings.weight", Tensor::Zeros({8, 64}, DType::kF32)});
  tensors_.push_back({"model.decoder.weight", *w_.decoder_weight});
  EXPECT_THAT(LoadError(), AllOf(HasSubstr("unexpected tensors"),
                                 HasSubstr("\"model.position_embeddings.weight\""),
                                 HasSubstr("\"model.decoder.weight\"")));
}

TEST_F(CheckpointErrorTest, BothWithAndWithoutPrefix) {
  tensors_.push_back({"encoder.weight", w_.embeddings});
  EXPECT_THAT(LoadError(), AllOf(HasSubstr("\"encoder.weight\""), HasSubstr("both")));
}

TEST_F(CheckpointErrorTest, DecoderHalfMissingOrMisshaped) {
  Erase("decoder.bias");
  EXPECT_THAT(LoadError(), HasSubstr("\"decoder.weight\" without \"decoder.bias\""));
  tensors_.push_back({"decoder.bias", Tensor::Zeros({64}, DType::kF32)});
  EXPECT_THAT(LoadError(), AllOf(HasSubstr("\"decoder.bias\""), HasSubstr("[100]")));
}

TEST_F(CheckpointErrorTest, BadConfig) {
  write_config_ = false;
  EXPECT_THAT(LoadError(), HasSubstr("config.json"));  // absent
  testing::WriteBytes(dir_.Sub("config.json"), R"({"model_type": "neobert"})");
  EXPECT_THAT(LoadError(), HasSubstr("\"hidden_size\""));
  NeoBertConfig other = w_.config;
  other.num_hidden_layers = 3;  // file holds 2 layers
  testing::WriteBytes(dir_.Sub("config.json"), other.ToJson());
  EXPECT_THAT(LoadError(), HasSubstr("transformer_encoder.2."));
}

TEST_F(CheckpointErrorTest, CorruptSafetensors) {
  EXPECT_EQ(LoadError(), "");
  testing::WriteBytes(dir_.Sub("model.safetensors"), "\x10\x00\x00\x00\x00\x00\x00\x00{}");
  absl::StatusOr<NeoBertWeights> r = LoadCheckpoint(dir_.path());
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(std::string(r.status().message()), HasSubstr("model.safetensors"));
}

TEST(SaveCheckpointTest, RefusesInconsistentWeights) {
  TempDir dir;
  NeoBertWeights w = RandomWeights(Tiny(), 1);
  w.layers[1].wo = Tensor::Zeros({64, 63}, DType::kF32);
  absl::Status s = SaveCheckpoint(w, dir.path());
  EXPECT_THAT(std::string(s.message()), HasSubstr("transformer_encoder.1.wo.weight"));
  w = RandomWeights(Tiny(), 1);
  w.layers.pop_back();
  EXPECT_FALSE(SaveCheckpoint(w, dir.path()).ok());
  w = RandomWeights(Tiny(), 1);
  w.decoder_bias.reset();
  EXPECT_FALSE(SaveCheckpoint(w, dir.path()).ok());
  EXPECT_FALSE(SaveCheckpoint(RandomWeights(Tiny(), 1), dir.Sub("no/such/dir")).ok());
  EXPECT_FALSE(SaveCheckpoint(RandomWeights(Tiny(), 1), dir.path(), {.dtype = DType::kI32}).ok());
  EXPECT_TRUE(std::filesystem::is_empty(dir.path()));  // nothing half-written
}

}  // namespace
}  // namespace neodb::encoder
