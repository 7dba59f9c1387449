// The Encoder facade over in-memory weights and a toy tokenizer: framing,
// prefix, overflow (error vs chunk), normalisation, batching, validation.
#include "encoder/encoder.h"

#include <cmath>
#include <string>
#include <vector>

#include "encoder/cuda/cuda_backend.h"
#include "gtest/gtest.h"
#include "tests/encoder/test_weights.h"

namespace neodb::encoder {
namespace {

// Splits on spaces; word "wN" → id 110 + N; any other word is an error.
class ToyTokenizer : public Tokenizer {
 public:
  absl::StatusOr<std::vector<int32_t>> Tokenize(std::string_view text) const override {
    std::vector<int32_t> ids;
    size_t pos = 0;
    while (pos < text.size()) {
      size_t end = text.find(' ', pos);
      if (end == std::string_view::npos) end = text.size();
      const std::string_view w = text.substr(pos, end - pos);
      pos = end + 1;
      if (w.empty()) continue;
      if (w.size() < 2 || w[0] != 'w') return absl::InvalidArgumentError("bad word");
      ids.push_back(110 + std::stoi(std::string(w.substr(1))));
    }
    return ids;
  }
  const SpecialTokens& special() const override { return special_; }
  int32_t vocab_size() const override { return 211; }
  std::string IdToToken(int32_t id) const override { return "w" + std::to_string(id - 110); }
  std::string_view kind() const override { return "toy"; }
  absl::Status SaveTo(const std::string&) const override { return absl::OkStatus(); }

 private:
  SpecialTokens special_;
};

std::string Words(int n, int start = 0) {
  std::string s;
  for (int i = 0; i < n; ++i) s += "w" + std::to_string((start + i) % 100) + " ";
  return s;
}

class EncoderTest : public ::testing::Test {
 protected:
  void Build(int64_t max_length, int64_t max_batch_tokens = 16384) {
    NeoBertConfig config = testing::SmallConfig(64, 2, 4, 211, max_length);
    weights_ = std::make_shared<NeoBertWeights>(testing::TestWeights(config, 128, 3));
    EncoderOptions options;
    options.max_batch_tokens = max_batch_tokens;
    auto e = Encoder::Create(weights_, std::make_unique<ToyTokenizer>(), options);
    ASSERT_TRUE(e.ok()) << e.status();
    encoder_ = *std::move(e);
    backend_ = MakeCpuBackend(weights_, 1);
  }
  std::vector<float> Direct(const std::vector<int32_t>& seq, Pooling pooling) {
    PackedBatch b;
    b.Add(seq);
    auto t = backend_->Pool(b, pooling);
    EXPECT_TRUE(t.ok());
    return std::vector<float>(t->data<float>(), t->data<float>() + t->numel());
  }
  std::shared_ptr<const NeoBertWeights> weights_;
  std::unique_ptr<Encoder> encoder_;
  std::unique_ptr<Backend> backend_;
};

void ExpectClose(const std::vector<float>& a, const std::vector<float>& b, double tol = 1e-5) {
  ASSERT_EQ(a.size(), b.size());
  for (size_t i = 0; i < a.size(); ++i) ASSERT_NEAR(a[i], b[i], tol * (1 + std::abs(b[i]))) << i;
}

TEST_F(EncoderTest, FramesWithClsSepAndPools) {
  Build(64);
  for (Pooling pooling : {Pooling::kCls, Pooling::kMean}) {
    EmbedOptions opt;
    opt.pooling = pooling;
    auto out = encoder_->Embed({"w1 w2 w3", ""}, opt);
    ASSERT_TRUE(out.ok()) << out.status();
    ASSERT_EQ(out->size(), 2u);
    EXPECT_EQ((*out)[0].tokens, (std::vector<int32_t>{101, 111, 112, 113, 102}));
    EXPECT_EQ((*out)[0].num_tokens, 5);
    EXPECT_EQ((*out)[0].num_chunks, 1);
    EXPECT_EQ((*out)[1].tokens, (std::vector<int32_t>{101, 102}));  // empty text
    ExpectClose((*out)[0].vector, Direct({101, 111, 112, 113, 102}, pooling));
    ExpectClose((*out)[1].vector, Direct({101, 102}, pooling));
  }
}

TEST_F(EncoderTest, PrefixIsPrepended) {
  Build(64);
  EmbedOptions with_prefix;
  with_prefix.prefix = "w7 w8";
  auto a = encoder_->Embed({"w1 w2"}, with_prefix);
  auto b = encoder_->Embed({"w7 w8 w1 w2"}, EmbedOptions{});
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_EQ((*a)[0].tokens, (*b)[0].tokens);
  ExpectClose((*a)[0].vector, (*b)[0].vector, 0);
}

TEST_F(EncoderTest, OverflowIsAnErrorNamingTheText) {
  Build(16);
  auto out = encoder_->Embed({"w1", Words(14), Words(15)}, EmbedOptions{});  // 16 ok, 17 not
  ASSERT_EQ(out.status().code(), absl::StatusCode::kInvalidArgument);
  const std::string msg(out.status().message());
  EXPECT_NE(msg.find("text 2"), std::string::npos) << msg;
  EXPECT_NE(msg.find("17 tokens"), std::string::npos) << msg;
  EXPECT_NE(msg.find("max_length 16"), std::string::npos) << msg;
}

TEST_F(EncoderTest, ChunkingAveragesWindowsByTokenCount) {
  Build(16);
  EmbedOptions opt;
  opt.overflow = Overflow::kChunk;
  const std::string text = Words(30);  // windows of 14: 14 + 14 + 2
  auto out = encoder_->Embed({"w5", text}, opt);
  ASSERT_TRUE(out.ok()) << out.status();
  const Embedding& e = (*out)[1];
  EXPECT_EQ(e.num_chunks, 3);
  EXPECT_EQ(e.num_tokens, 30 + 3 * 2);
  ASSERT_EQ(e.tokens.size(), 16u);
  EXPECT_EQ(e.tokens.front(), 101);
  EXPECT_EQ(e.tokens.back(), 102);
  std::vector<double> want(64, 0.0);
  for (int chunk = 0; chunk < 3; ++chunk) {
    std::vector<int32_t> seq = {101};
    for (int i = chunk * 14; i < std::min(30, chunk * 14 + 14); ++i) seq.push_back(110 + i);
    seq.push_back(102);
    const auto v = Direct(seq, Pooling::kMean);
    for (int c = 0; c < 64; ++c) want[c] += v[c] * seq.size() / 36.0;
  }
  std::vector<float> wantf(want.begin(), want.end());
  ExpectClose(e.vector, wantf);
}

TEST_F(EncoderTest, NormalizeGivesUnitVectors) {
  Build(64);
  EmbedOptions opt;
  opt.normalize = true;
  auto out = encoder_->Embed({"w1 w2", "w3", Words(40)}, opt);
  ASSERT_TRUE(out.ok());
  for (const Embedding& e : *out) {
    double ss = 0;
    for (float v : e.vector) ss += double(v) * v;
    EXPECT_NEAR(std::sqrt(ss), 1.0, 1e-6);
  }
  auto ids = encoder_->EmbedIds({{101, 111, 102}}, Pooling::kCls, true);
  ASSERT_TRUE(ids.ok());
  double ss = 0;
  for (int64_t i = 0; i < ids->numel(); ++i)
    ss += double(ids->data<float>()[i]) * ids->data<float>()[i];
  EXPECT_NEAR(std::sqrt(ss), 1.0, 1e-6);
}

TEST_F(EncoderTest, EmptyBatch) {
  Build(64);
  auto out = encoder_->Embed({}, EmbedOptions{});
  ASSERT_TRUE(out.ok());
  EXPECT_TRUE(out->empty());
  auto ids = encoder_->EmbedIds({}, Pooling::kMean, false);
  ASSERT_TRUE(ids.ok());
  EXPECT_EQ(ids->shape(), (Shape{0, 64}));
}

TEST_F(EncoderTest, SmallForwardPassesKeepInputOrder) {
  Build(64, /*max_batch_tokens=*/8);  // forces one or two sequences per pass
  std::vector<std::string> texts = {"w1", Words(20), "w2 w3", Words(5, 9), "", Words(9, 30)};
  auto small = encoder_->Embed(texts, EmbedOptions{});
  Build(64);
  auto big = encoder_->Embed(texts, EmbedOptions{});
  ASSERT_TRUE(small.ok() && big.ok());
  for (size_t i = 0; i < texts.size(); ++i) {
    EXPECT_EQ((*small)[i].tokens, (*big)[i].tokens);
    ExpectClose((*small)[i].vector, (*big)[i].vector);
  }
}

TEST_F(EncoderTest, CudaRequestWithoutCudaIsUnavailable) {
  // Without a usable device (a build without CUDA, or a CUDA build on a
  // machine without a GPU) asking for CUDA is refused, never the CPU.
  if (CudaDeviceCount().ok()) GTEST_SKIP() << "a CUDA device is visible: the gpu tests cover it";
  NeoBertConfig config = testing::SmallConfig();
  EncoderOptions options;
  options.backend.device = Device::kCuda;
  auto e = Encoder::Create(std::make_shared<NeoBertWeights>(testing::TestWeights(config, 128, 3)),
                           std::make_unique<ToyTokenizer>(), options);
  EXPECT_EQ(e.status().code(), absl::StatusCode::kUnavailable) << e.status();
  EXPECT_EQ(e.status().message().rfind("no CUDA device", 0), 0u) << e.status();
}

TEST_F(EncoderTest, TokenizerErrorsNameTheText) {
  Build(64);
  auto out = encoder_->Embed({"w1", "oops"}, EmbedOptions{});
  ASSERT_EQ(out.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(out.status().message().find("text 1"), std::string::npos);
}

TEST_F(EncoderTest, EmbedIdsValidates) {
  Build(16);
  EXPECT_EQ(
      encoder_->EmbedIds({{101, 102}, {101, 211, 102}}, Pooling::kMean, false).status().code(),
      absl::StatusCode::kInvalidArgument);
  auto s = encoder_->EmbedIds({{101, 102}, {}}, Pooling::kMean, false).status();
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("sequence 1"), std::string::npos);
  EXPECT_FALSE(encoder_->EmbedIds({std::vector<int32_t>(17, 5)}, Pooling::kCls, false).ok());
  EXPECT_TRUE(encoder_->EmbedIds({std::vector<int32_t>(16, 5)}, Pooling::kCls, false).ok());
}

}  // namespace
}  // namespace neodb::encoder
