// The whole CUDA forward pass against the independent CPU F32 reference
// (cuda_reference.cc) on random full-size NeoBERT weights: mixed-length
// packed batches, both poolings, BF16 / F16 / F32 compute. Fresh random
// token ids per check; every device activation and output is poisoned (NaN)
// before each run. Prints the cosine and relative errors it saw.
#include "encoder/cuda/cuda_backend.h"

#include <cmath>
#include <cstdio>
#include <memory>
#include <random>
#include <vector>

#include "encoder/cuda/cuda_neobert.h"
#include "encoder/cuda/cuda_weights.h"
#include "gtest/gtest.h"
#include "tests/encoder/cuda_reference.h"
#include "tests/encoder/cuda_test_util.h"

namespace neodb::encoder::testing {
namespace {

// Full-size NeoBERT (NEOBERT.md §1) with the checkpoint room's random init
// (uniform ±0.02), generated once per test binary. The norm weights, which
// that init sets to 1, are jittered to 1 ± 0.1 so that a kernel ignoring
// them cannot pass.
NeoBertWeights JitterNorms(NeoBertWeights w) {
  std::mt19937_64 rng(99);
  std::uniform_real_distribution<float> jitter(0.9f, 1.1f);
  auto apply = [&](Tensor& t) {
    for (int64_t i = 0; i < t.numel(); ++i) t.data<float>()[i] = jitter(rng);
  };
  for (LayerWeights& l : w.layers) {
    apply(l.attention_norm);
    apply(l.ffn_norm);
  }
  apply(w.final_norm);
  return w;
}

const NeoBertWeights& FullSizeWeights() {
  static const NeoBertWeights* w = new NeoBertWeights(
      JitterNorms(RandomWeights(NeoBertConfig{}, 20250101, /*with_decoder=*/false)));
  return *w;
}

PackedBatch RandomBatch(std::mt19937_64& rng, const std::vector<int>& lengths, int64_t vocab) {
  PackedBatch b;
  for (int len : lengths) {
    for (int i = 0; i < len; ++i) {
      // [CLS] first, [SEP] last, random ids between (as a tokeniser would).
      int32_t id = static_cast<int32_t>(rng() % vocab);
      if (i == 0) id = 101;
      if (i == len - 1 && len > 1) id = 102;
      b.ids.push_back(id);
    }
    b.offsets.push_back(b.offsets.back() + len);
  }
  return b;
}

// Lengths 1 and tile edges always; the rest fresh per check.
std::vector<int> MixedLengths(std::mt19937_64& rng) {
  std::vector<int> lengths = {1, 64, 65};
  for (int i = 0; i < 4; ++i) lengths.push_back(2 + static_cast<int>(rng() % 200));
  lengths.push_back(300 + static_cast<int>(rng() % 213));
  return lengths;
}

struct Thresholds {
  double min_cosine;
  double max_rel;  // max |got - want| / max |want| per vector
};

Thresholds For(DType dt) {
  switch (dt) {
    case DType::kF32:
      return {0.999999, 1e-3};
    case DType::kF16:
      return {0.9999, 3e-2};
    default:
      return {0.9999, 5e-2};
  }
}

class CudaBackendTest : public ::testing::TestWithParam<DType> {};

TEST_P(CudaBackendTest, MatchesCpuF32ReferenceOnMixedLengthBatches) {
  NEODB_CUDA_CONTEXT_OR_SKIP(ctx);
  const DType dt = GetParam();
  const NeoBertWeights& w = FullSizeWeights();
  auto uploaded = cuda::CudaWeights::Upload(w, dt);
  ASSERT_TRUE(uploaded.ok()) << uploaded.status();
  cuda::CudaNeoBert model(ctx.get(), &*uploaded);
  const Thresholds th = For(dt);
  const int64_t c = w.config.hidden_size;
  const uint64_t seed = std::random_device{}();
  std::printf("[seed %llu]\n", static_cast<unsigned long long>(seed));
  std::mt19937_64 rng(seed);

  for (Pooling pooling : {Pooling::kCls, Pooling::kMean}) {
    // The second check also runs the QKV and FFN blocks in 97-token slices
    // (slice edges inside sequences).
    const int64_t chunk = pooling == Pooling::kMean ? 97 : 0;
    model.set_chunk_tokens(chunk);
    // Fresh inputs for every check.
    const PackedBatch batch = RandomBatch(rng, MixedLengths(rng), w.config.vocab_size);
    ASSERT_TRUE(model.Validate(batch).ok());
    ASSERT_TRUE(model.PoisonForTesting(batch.total_tokens(), batch.batch_size()).ok());
    ASSERT_TRUE(model.Forward(batch).ok());
    ASSERT_TRUE(model.Pool(pooling).ok());
    const auto hidden = Download(model.hidden(), batch.total_tokens() * c, DType::kF32);
    const auto pooled = Download(model.pooled(), batch.batch_size() * c, DType::kF32);

    const auto want_hidden = ReferenceHidden(w, batch);
    const auto want_pooled = ReferencePool(want_hidden, c, batch, pooling);
    double worst_cos = 1, worst_rel = 0;
    for (int64_t b = 0; b < batch.batch_size(); ++b) {
      const Diff d = Compare(&pooled[b * c], &want_pooled[b * c], c);
      EXPECT_FALSE(d.any_nan) << "sequence " << b;
      EXPECT_GE(d.cosine, th.min_cosine) << "sequence " << b << " length " << batch.length(b);
      EXPECT_LE(d.max_rel, th.max_rel) << "sequence " << b << " length " << batch.length(b);
      worst_cos = std::min(worst_cos, d.cosine);
      worst_rel = std::max(worst_rel, d.max_rel);
    }
    double worst_tok_cos = 1;
    for (int64_t t = 0; t < batch.total_tokens(); ++t) {
      const Diff d = Compare(&hidden[t * c], &want_hidden[t * c], c);
      worst_tok_cos = std::min(worst_tok_cos, d.cosine);
    }
    EXPECT_GE(worst_tok_cos, th.min_cosine * 0.9999);
    std::printf(
        "%s %s pooling (slices of %lld), %lld sequences / %lld tokens: min cosine %.7f, "
        "max rel err %.3g (per token: min cosine %.7f)\n",
        std::string(DTypeName(dt)).c_str(), pooling == Pooling::kCls ? "cls" : "mean",
        static_cast<long long>(chunk), static_cast<long long>(batch.batch_size()),
        static_cast<long long>(batch.total_tokens()), worst_cos, worst_rel, worst_tok_cos);
  }
}

INSTANTIATE_TEST_SUITE_P(ComputeTypes, CudaBackendTest,
                         ::testing::Values(DType::kBF16, DType::kF16, DType::kF32),
                         [](const auto& info) { return std::string(DTypeName(info.param)); });

// Through the public factory: the Backend interface returns CPU F32 tensors
// equal to the model's own results, and rejects bad input with a Status.
TEST(CudaBackendPublicTest, BackendInterfaceAndInputValidation) {
  NEODB_CUDA_CONTEXT_OR_SKIP(ctx);
  auto weights = std::make_shared<const NeoBertWeights>(
      RandomWeights(NeoBertConfig{}, 7, /*with_decoder=*/false));
  BackendOptions options;
  options.device = Device::kCuda;
  options.compute_dtype = DType::kBF16;
  auto backend = MakeCudaBackend(weights, options);
  ASSERT_TRUE(backend.ok()) << backend.status();
  EXPECT_EQ((*backend)->device(), Device::kCuda);

  std::mt19937_64 rng(std::random_device{}());
  const PackedBatch batch = RandomBatch(rng, {3, 40, 129}, weights->config.vocab_size);
  auto hidden = (*backend)->HiddenStates(batch);
  ASSERT_TRUE(hidden.ok()) << hidden.status();
  EXPECT_EQ(hidden->shape(), (Shape{batch.total_tokens(), 768}));
  auto pooled = (*backend)->Pool(batch, Pooling::kMean);
  ASSERT_TRUE(pooled.ok()) << pooled.status();
  ASSERT_EQ(pooled->shape(), (Shape{3, 768}));
  // Mean of the returned hidden states equals the pooled vector.
  const auto want = ReferencePool(
      std::vector<float>(hidden->data<float>(), hidden->data<float>() + hidden->numel()), 768,
      batch, Pooling::kMean);
  const Diff d = Compare(pooled->data<float>(), want.data(), 3 * 768);
  EXPECT_LT(d.max_abs, 1e-4);

  PackedBatch bad_id = batch;
  bad_id.ids[5] = 30522;
  EXPECT_EQ((*backend)->Pool(bad_id, Pooling::kCls).status().code(),
            absl::StatusCode::kInvalidArgument);
  PackedBatch too_long = RandomBatch(rng, {4097}, 30522);
  EXPECT_EQ((*backend)->HiddenStates(too_long).status().code(), absl::StatusCode::kInvalidArgument);
  PackedBatch empty_seq;
  empty_seq.offsets = {0, 0};
  EXPECT_EQ((*backend)->HiddenStates(empty_seq).status().code(),
            absl::StatusCode::kInvalidArgument);

  BackendOptions bad_device = options;
  bad_device.device_index = 1000;
  EXPECT_EQ(MakeCudaBackend(weights, bad_device).status().code(),
            absl::StatusCode::kInvalidArgument);
  BackendOptions bad_dtype = options;
  bad_dtype.compute_dtype = DType::kI32;
  EXPECT_EQ(MakeCudaBackend(weights, bad_dtype).status().code(),
            absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace neodb::encoder::testing
