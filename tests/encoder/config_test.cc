#include "encoder/checkpoint/config.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "absl/strings/str_cat.h"
#include "common/atomic_file.h"
#include "common/env_memory.h"
#include "encoder/checkpoint/presets.h"
#include "encoder/core/file_util.h"
#include "nlohmann/json.hpp"
#include "tests/encoder/checkpoint_test_util.h"

namespace neodb::encoder {
namespace {

using ::testing::HasSubstr;
using json = nlohmann::json;

// The released chandar-lab/NeoBERT config.json, including keys we ignore.
json ReleaseConfig() {
  return json::parse(R"({
    "architectures": ["NeoBERTLMHead"],
    "auto_map": {"AutoConfig": "model.NeoBERTConfig", "AutoModel": "model.NeoBERT"},
    "classifier_init_range": 0.02,
    "decoder_init_range": 0.02,
    "dim_head": 64,
    "embedding_init_range": 0.02,
    "hidden_size": 768,
    "intermediate_size": 3072,
    "kwargs": {},
    "max_length": 4096,
    "model_type": "neobert",
    "norm_eps": 1e-05,
    "num_attention_heads": 12,
    "num_hidden_layers": 28,
    "pad_token_id": 0,
    "torch_dtype": "float32",
    "transformers_version": "4.48.2",
    "vocab_size": 30522
  })");
}

std::string Message(const json& j) {
  absl::StatusOr<NeoBertConfig> c = NeoBertConfig::FromJson(j.dump());
  EXPECT_FALSE(c.ok()) << j.dump();
  return c.ok() ? "" : std::string(c.status().message());
}

TEST(ConfigTest, ParsesTheReleaseConfig) {
  absl::StatusOr<NeoBertConfig> c = NeoBertConfig::FromJson(ReleaseConfig().dump());
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->hidden_size, 768);
  EXPECT_EQ(c->num_hidden_layers, 28);
  EXPECT_EQ(c->num_attention_heads, 12);
  EXPECT_EQ(c->intermediate_size, 3072);
  EXPECT_EQ(c->vocab_size, 30522);
  EXPECT_EQ(c->max_length, 4096);
  EXPECT_EQ(c->pad_token_id, 0);
  EXPECT_DOUBLE_EQ(c->norm_eps, 1e-5);
  EXPECT_DOUBLE_EQ(c->rope_theta, 10000.0);
  EXPECT_EQ(c->head_dim(), 64);
  EXPECT_EQ(c->ffn_dim(), 2048);
  EXPECT_TRUE(c->Validate().ok());
}

TEST(ConfigTest, FfnDimRoundsTwoThirdsUpToAMultipleOfEight) {
  NeoBertConfig c;
  c.intermediate_size = 3072;
  EXPECT_EQ(c.ffn_dim(), 2048);
  c.intermediate_size = 192;  // 128 exactly
  EXPECT_EQ(c.ffn_dim(), 128);
  c.intermediate_size = 1024;  // int(682.67) = 682 → 688
  EXPECT_EQ(c.ffn_dim(), 688);
  c.intermediate_size = 100;  // 66 → 72
  EXPECT_EQ(c.ffn_dim(), 72);
}

TEST(ConfigTest, EachMissingRequiredKeyIsNamed) {
  for (const char* key : {"model_type", "hidden_size", "num_hidden_layers", "num_attention_heads",
                          "intermediate_size", "vocab_size", "max_length", "norm_eps"}) {
    json j = ReleaseConfig();
    j.erase(key);
    const std::string msg = Message(j);
    EXPECT_THAT(msg, HasSubstr(std::string("\"") + key + "\"")) << key;
    EXPECT_THAT(msg, HasSubstr("missing")) << key;
  }
}

TEST(ConfigTest, OptionalKeysDefault) {
  json j = ReleaseConfig();
  j.erase("pad_token_id");
  j.erase("dim_head");
  absl::StatusOr<NeoBertConfig> c = NeoBertConfig::FromJson(j.dump());
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->pad_token_id, 0);
  EXPECT_DOUBLE_EQ(c->rope_theta, 10000.0);
}

TEST(ConfigTest, BadValuesAreNamed) {
  struct Case {
    const char* key;
    json value;
  } cases[] = {
      {"hidden_size", "768"},
      {"hidden_size", 768.5},
      {"hidden_size", 0},
      {"num_hidden_layers", -1},
      {"num_hidden_layers", 0},
      {"num_attention_heads", 0},
      {"intermediate_size", -3072},
      {"vocab_size", 0},
      {"vocab_size", nullptr},
      {"max_length", 0},
      {"norm_eps", 0},
      {"norm_eps", "1e-5"},
      {"norm_eps", -1e-5},
      {"pad_token_id", 30522},
      {"pad_token_id", -1},
      {"rope_theta", 0},
      {"rope_theta", "10000"},
      {"dim_head", 32},
      {"hidden_size", json(uint64_t{1} << 63)},
  };
  for (const Case& c : cases) {
    json j = ReleaseConfig();
    j[c.key] = c.value;
    EXPECT_THAT(Message(j), HasSubstr(std::string("\"") + c.key + "\"")) << c.key << "=" << c.value;
  }
}

TEST(ConfigTest, ModelTypeMustBeNeobert) {
  json j = ReleaseConfig();
  j["model_type"] = "bert";
  EXPECT_THAT(Message(j), HasSubstr("model_type"));
  j["model_type"] = 7;
  EXPECT_THAT(Message(j), HasSubstr("model_type"));
}

TEST(ConfigTest, MaxPositionEmbeddingsIsAnAlias) {
  json j = ReleaseConfig();
  j.erase("max_length");
  j["max_position_embeddings"] = 1024;
  absl::StatusOr<NeoBertConfig> c = NeoBertConfig::FromJson(j.dump());
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->max_length, 1024);

  j["max_length"] = 1024;  // both, agreeing
  ASSERT_TRUE(NeoBertConfig::FromJson(j.dump()).ok());
  j["max_length"] = 2048;  // both, disagreeing
  EXPECT_THAT(Message(j), HasSubstr("max_position_embeddings"));
}

TEST(ConfigTest, HiddenMustBeDivisibleByHeads) {
  json j = ReleaseConfig();
  j.erase("dim_head");
  j["hidden_size"] = 770;
  const std::string msg = Message(j);
  EXPECT_THAT(msg, HasSubstr("hidden_size"));
  EXPECT_THAT(msg, HasSubstr("divisible"));
  EXPECT_THAT(msg, HasSubstr("num_attention_heads"));
}

TEST(ConfigTest, ReadsNormEpsAndRopeThetaFromTheFile) {
  json j = ReleaseConfig();
  j["norm_eps"] = 1e-6;
  j["rope_theta"] = 500000.0;
  absl::StatusOr<NeoBertConfig> c = NeoBertConfig::FromJson(j.dump());
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_DOUBLE_EQ(c->norm_eps, 1e-6);
  EXPECT_DOUBLE_EQ(c->rope_theta, 500000.0);
}

TEST(ConfigTest, RejectsInvalidJson) {
  for (const char* text : {"", "{", "{\"hidden_size\": }", "not json", "[1, 2]", "42", "null"}) {
    absl::StatusOr<NeoBertConfig> c = NeoBertConfig::FromJson(text);
    ASSERT_FALSE(c.ok()) << text;
    EXPECT_EQ(c.status().code(), absl::StatusCode::kInvalidArgument) << text;
    EXPECT_THAT(std::string(c.status().message()), HasSubstr("config.json")) << text;
  }
}

TEST(ConfigTest, ToJsonRoundTripsAndLooksLikeHuggingFace) {
  NeoBertConfig c;
  c.hidden_size = 256;
  c.num_hidden_layers = 4;
  c.num_attention_heads = 4;
  c.intermediate_size = 1024;
  c.vocab_size = 1000;
  c.max_length = 2048;
  c.norm_eps = 1e-6;
  const std::string text = c.ToJson("bfloat16");
  const json j = json::parse(text);
  EXPECT_EQ(j["architectures"], json::array({"NeoBERTLMHead"}));
  EXPECT_EQ(j["model_type"], "neobert");
  EXPECT_EQ(j["dim_head"], 64);
  EXPECT_EQ(j["torch_dtype"], "bfloat16");
  EXPECT_EQ(j["max_length"], 2048);
  EXPECT_FALSE(j.contains("rope_theta"));  // the release has none
  EXPECT_EQ(json::parse(c.ToJson())["torch_dtype"], "float32");

  absl::StatusOr<NeoBertConfig> back = NeoBertConfig::FromJson(text);
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(back->hidden_size, 256);
  EXPECT_EQ(back->num_hidden_layers, 4);
  EXPECT_EQ(back->num_attention_heads, 4);
  EXPECT_EQ(back->intermediate_size, 1024);
  EXPECT_EQ(back->vocab_size, 1000);
  EXPECT_EQ(back->max_length, 2048);
  EXPECT_DOUBLE_EQ(back->norm_eps, 1e-6);
  EXPECT_EQ(back->ToJson("bfloat16"), text);  // canonical

  c.rope_theta = 160000.0;
  absl::StatusOr<NeoBertConfig> theta = NeoBertConfig::FromJson(c.ToJson());
  ASSERT_TRUE(theta.ok());
  EXPECT_DOUBLE_EQ(theta->rope_theta, 160000.0);
}

TEST(ConfigTest, FromFile) {
  testing::TempDir dir;
  testing::WriteBytes(dir.Sub("config.json"), ReleaseConfig().dump());
  absl::StatusOr<NeoBertConfig> c = NeoBertConfig::FromFile(dir.Sub("config.json"));
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->hidden_size, 768);

  absl::StatusOr<NeoBertConfig> missing = NeoBertConfig::FromFile(dir.Sub("nope.json"));
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(std::string(missing.status().message()), HasSubstr("nope.json"));

  json bad = ReleaseConfig();
  bad.erase("vocab_size");
  testing::WriteBytes(dir.Sub("bad.json"), bad.dump());
  absl::StatusOr<NeoBertConfig> b = NeoBertConfig::FromFile(dir.Sub("bad.json"));
  ASSERT_FALSE(b.ok());
  EXPECT_THAT(std::string(b.status().message()), HasSubstr("bad.json"));
  EXPECT_THAT(std::string(b.status().message()), HasSubstr("vocab_size"));
}

TEST(ConfigTest, ValidateChecksConfigsBuiltInCode) {
  NeoBertConfig c;
  EXPECT_TRUE(c.Validate().ok());
  c.num_attention_heads = 7;
  EXPECT_THAT(std::string(c.Validate().message()), HasSubstr("divisible"));
  c = NeoBertConfig();
  c.vocab_size = 0;
  EXPECT_THAT(std::string(c.Validate().message()), HasSubstr("vocab_size"));
  c = NeoBertConfig();
  c.hidden_size = 12 * 3;  // head_dim 3: RoPE needs pairs
  EXPECT_THAT(std::string(c.Validate().message()), HasSubstr("even"));
}

TEST(PresetTest, Sizes) {
  struct Want {
    const char* name;
    int64_t hidden, layers, heads, intermediate, max_length, ffn;
  } wants[] = {{"tiny", 64, 2, 4, 192, 512, 128},
               {"small", 256, 4, 4, 1024, 4096, 688},
               {"full", 768, 28, 12, 3072, 4096, 2048}};
  for (const Want& w : wants) {
    absl::StatusOr<NeoBertConfig> c = PresetConfig(w.name, 30522);
    ASSERT_TRUE(c.ok()) << w.name << c.status();
    EXPECT_EQ(c->hidden_size, w.hidden) << w.name;
    EXPECT_EQ(c->num_hidden_layers, w.layers) << w.name;
    EXPECT_EQ(c->num_attention_heads, w.heads) << w.name;
    EXPECT_EQ(c->intermediate_size, w.intermediate) << w.name;
    EXPECT_EQ(c->max_length, w.max_length) << w.name;
    EXPECT_EQ(c->ffn_dim(), w.ffn) << w.name;
    EXPECT_EQ(c->vocab_size, 30522);
    EXPECT_DOUBLE_EQ(c->norm_eps, 1e-5);
  }
}

TEST(PresetTest, RejectsUnknownNameAndBadVocab) {
  absl::StatusOr<NeoBertConfig> c = PresetConfig("huge", 100);
  ASSERT_FALSE(c.ok());
  EXPECT_THAT(std::string(c.status().message()), HasSubstr("huge"));
  absl::StatusOr<NeoBertConfig> v = PresetConfig("tiny", 0);
  ASSERT_FALSE(v.ok());
  EXPECT_THAT(std::string(v.status().message()), HasSubstr("vocab_size"));
}

// config.json and the file helpers read through the Env they are given: a
// memory Env serves them with no file on disk.
TEST(NeoBertConfigTest, FromFileReadsThroughTheEnv) {
  std::unique_ptr<Env> env = NewMemEnv();
  ASSERT_TRUE(env->CreateDir("/model").ok());
  const std::string text = ReleaseConfig().dump();
  ASSERT_TRUE(WriteFileAtomically(env.get(), "/model/config.json", {text}).ok());
  absl::StatusOr<NeoBertConfig> c = NeoBertConfig::FromFile("/model/config.json", env.get());
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->hidden_size, 768);
  // Not on the disk, and an error that names the path when absent.
  EXPECT_TRUE(absl::IsNotFound(NeoBertConfig::FromFile("/model/config.json").status()));
  absl::Status s = NeoBertConfig::FromFile("/model/none.json", env.get()).status();
  EXPECT_TRUE(absl::IsNotFound(s));
  EXPECT_THAT(std::string(s.message()), HasSubstr("/model/none.json"));

  EXPECT_TRUE(IsRegularFile("/model/config.json", env.get()));
  EXPECT_FALSE(IsRegularFile("/model", env.get()));
  EXPECT_EQ(*ReadWholeFile("/model/config.json", 1 << 20, env.get()), text);
  EXPECT_EQ(ReadWholeFile("/model/config.json", 10, env.get()).status().message(),
            absl::StrCat("/model/config.json is ", text.size(), " bytes, more than the limit of 10"));
  EXPECT_EQ(ReadWholeFile("/model", 10, env.get()).status().message(),
            "/model is not a regular file");
}

}  // namespace
}  // namespace neodb::encoder
