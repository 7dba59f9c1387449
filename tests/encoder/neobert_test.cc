// The CPU backend against a naive double-precision forward pass, packed-batch
// invariance, and input validation. Weights come from the tests' own PRNG.
#include <cmath>
#include <memory>
#include <vector>

#include "encoder/backend.h"
#include "gtest/gtest.h"
#include "tests/encoder/test_weights.h"

namespace neodb::encoder {
namespace {

std::vector<int32_t> Ids(int64_t len, uint64_t seed, int64_t vocab) {
  testing::Prng prng(seed);
  std::vector<int32_t> ids(len);
  for (auto& id : ids) id = static_cast<int32_t>(prng.Next() % vocab);
  return ids;
}

class NeoBertCpuTest : public ::testing::Test {
 protected:
  NeoBertCpuTest()
      : config_(testing::SmallConfig()),
        weights_(std::make_shared<NeoBertWeights>(testing::TestWeights(config_, 128, 11))),
        backend_(MakeCpuBackend(weights_, 1)) {}
  NeoBertConfig config_;
  std::shared_ptr<const NeoBertWeights> weights_;
  std::unique_ptr<Backend> backend_;
};

TEST_F(NeoBertCpuTest, MatchesNaiveForward) {
  const std::vector<int64_t> lengths = {1, 2, 9, 70};
  PackedBatch batch;
  for (size_t i = 0; i < lengths.size(); ++i)
    batch.Add(Ids(lengths[i], 100 + i, config_.vocab_size));
  auto hidden = backend_->HiddenStates(batch);
  ASSERT_TRUE(hidden.ok()) << hidden.status();
  ASSERT_EQ(hidden->shape(), (Shape{batch.total_tokens(), config_.hidden_size}));
  for (int64_t b = 0; b < batch.batch_size(); ++b) {
    std::vector<int32_t> ids(batch.ids.begin() + batch.offsets[b],
                             batch.ids.begin() + batch.offsets[b + 1]);
    auto want = testing::NaiveForward(*weights_, ids);
    for (int64_t t = 0; t < batch.length(b); ++t) {
      for (int64_t c = 0; c < config_.hidden_size; ++c) {
        const float got = hidden->data<float>()[(batch.offsets[b] + t) * config_.hidden_size + c];
        ASSERT_NEAR(got, want[t][c], 2e-4 * (1 + std::abs(want[t][c])))
            << "sequence " << b << " token " << t << " dim " << c;
      }
    }
  }
}

TEST_F(NeoBertCpuTest, AttentionIsNotUniformWithTheseWeights) {
  // Guards the test weights: if attention were uniform, RoPE and head-split
  // mistakes would barely move the output. Swapping two tokens must change
  // the [CLS] vector clearly (positions matter).
  std::vector<int32_t> ids = Ids(12, 5, config_.vocab_size);
  std::vector<int32_t> swapped = ids;
  std::swap(swapped[3], swapped[8]);
  PackedBatch a, b;
  a.Add(ids);
  b.Add(swapped);
  auto pa = backend_->Pool(a, Pooling::kCls);
  auto pb = backend_->Pool(b, Pooling::kCls);
  ASSERT_TRUE(pa.ok() && pb.ok());
  double diff = 0, norm = 0;
  for (int64_t c = 0; c < config_.hidden_size; ++c) {
    diff += std::pow(pa->data<float>()[c] - pb->data<float>()[c], 2);
    norm += std::pow(pa->data<float>()[c], 2);
  }
  EXPECT_GT(std::sqrt(diff / norm), 0.05);
}

TEST_F(NeoBertCpuTest, PaddingInvariance) {
  const std::vector<int32_t> target = Ids(37, 77, config_.vocab_size);
  for (Pooling pooling : {Pooling::kCls, Pooling::kMean}) {
    PackedBatch alone;
    alone.Add(target);
    PackedBatch mixed;
    mixed.Add(Ids(300, 1, config_.vocab_size));
    mixed.Add(Ids(3, 2, config_.vocab_size));
    mixed.Add(target);
    mixed.Add(Ids(120, 3, config_.vocab_size));
    auto a = backend_->Pool(alone, pooling);
    auto m = backend_->Pool(mixed, pooling);
    ASSERT_TRUE(a.ok() && m.ok());
    ASSERT_EQ(m->shape(), (Shape{4, config_.hidden_size}));
    for (int64_t c = 0; c < config_.hidden_size; ++c) {
      const float x = a->data<float>()[c];
      const float y = m->data<float>()[2 * config_.hidden_size + c];
      ASSERT_NEAR(x, y, 1e-5 * std::max(1.0f, std::abs(x))) << "dim " << c;
    }
  }
}

TEST_F(NeoBertCpuTest, TwoThreadsGiveTheSameVectors) {
  PackedBatch batch;
  batch.Add(Ids(50, 21, config_.vocab_size));
  batch.Add(Ids(9, 22, config_.vocab_size));
  auto one = backend_->Pool(batch, Pooling::kMean);
  auto two = MakeCpuBackend(weights_, 2)->Pool(batch, Pooling::kMean);
  ASSERT_TRUE(one.ok() && two.ok());
  for (int64_t i = 0; i < one->numel(); ++i) {
    ASSERT_NEAR(one->data<float>()[i], two->data<float>()[i],
                1e-5 * std::max(1.0f, std::abs(one->data<float>()[i])));
  }
}

TEST_F(NeoBertCpuTest, PoolAgreesWithHiddenStates) {
  PackedBatch batch;
  batch.Add(Ids(4, 8, config_.vocab_size));
  batch.Add(Ids(6, 9, config_.vocab_size));
  auto hidden = backend_->HiddenStates(batch);
  auto mean = backend_->Pool(batch, Pooling::kMean);
  auto cls = backend_->Pool(batch, Pooling::kCls);
  ASSERT_TRUE(hidden.ok() && mean.ok() && cls.ok());
  const int64_t c = config_.hidden_size;
  for (int64_t e = 0; e < c; ++e) {
    EXPECT_EQ(cls->data<float>()[c + e], hidden->data<float>()[4 * c + e]);
    double s = 0;
    for (int64_t t = 4; t < 10; ++t) s += hidden->data<float>()[t * c + e];
    EXPECT_NEAR(mean->data<float>()[c + e], s / 6, 1e-5);
  }
}

TEST_F(NeoBertCpuTest, RejectsBadInput) {
  PackedBatch bad_id;
  bad_id.Add({1, 2, static_cast<int32_t>(config_.vocab_size)});
  auto s1 = backend_->HiddenStates(bad_id);
  EXPECT_EQ(s1.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(s1.status().message().find("outside the vocabulary"), std::string::npos);
  PackedBatch negative;
  negative.Add({-1});
  EXPECT_EQ(backend_->HiddenStates(negative).status().code(), absl::StatusCode::kInvalidArgument);
  PackedBatch too_long;
  too_long.Add(std::vector<int32_t>(config_.max_length + 1, 5));
  EXPECT_EQ(backend_->Pool(too_long, Pooling::kMean).status().code(),
            absl::StatusCode::kInvalidArgument);
  PackedBatch empty_seq;
  empty_seq.Add({});
  EXPECT_EQ(backend_->HiddenStates(empty_seq).status().code(), absl::StatusCode::kInvalidArgument);
}

TEST_F(NeoBertCpuTest, EmptyBatchGivesEmptyTensors) {
  PackedBatch empty;
  auto hidden = backend_->HiddenStates(empty);
  auto pooled = backend_->Pool(empty, Pooling::kMean);
  ASSERT_TRUE(hidden.ok() && pooled.ok());
  EXPECT_EQ(hidden->shape(), (Shape{0, config_.hidden_size}));
  EXPECT_EQ(pooled->shape(), (Shape{0, config_.hidden_size}));
}

TEST(PackedBatchTest, AddAppendsAndRecordsOffsets) {
  PackedBatch b;
  EXPECT_EQ(b.batch_size(), 0);
  b.Add({1, 2, 3});
  b.Add({4});
  EXPECT_EQ(b.ids, (std::vector<int32_t>{1, 2, 3, 4}));
  EXPECT_EQ(b.offsets, (std::vector<int64_t>{0, 3, 4}));
  EXPECT_EQ(b.length(0), 3);
  EXPECT_EQ(b.total_tokens(), 4);
}

}  // namespace
}  // namespace neodb::encoder
