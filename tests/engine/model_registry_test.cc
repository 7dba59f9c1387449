// ModelRegistry: one load per checkpoint shared by its users, the content
// hash checked, least recently used models unloaded past the byte cap (the
// default never), and a model still in use surviving its unloading.
#include "engine/model_registry.h"

#include "engine/fake_embedder.h"
#include "gtest/gtest.h"

namespace neodb::engine {
namespace {

// A fake model that claims 100 bytes of weights.
class SizedFake : public FakeEmbedder {
 public:
  explicit SizedFake(uint64_t seed, encoder::Precision precision = encoder::Precision::kF32)
      : FakeEmbedder(8, 32, seed), precision_(precision) {}
  size_t memory_bytes() const override { return 100; }
  encoder::Precision precision() const override { return precision_; }

 private:
  encoder::Precision precision_;
};

class ModelRegistryTest : public ::testing::Test {
 protected:
  ModelRegistryTest()
      : registry_(
            [this](const std::string& dir,
                   encoder::Precision precision) -> absl::StatusOr<std::unique_ptr<Embedder>> {
              ++loads_;
              if (dir == "missing") return absl::NotFoundError("no such directory");
              return std::unique_ptr<Embedder>(new SizedFake(std::stoull(dir), precision));
            },
            ModelRegistryOptions{.max_bytes = 250}) {
    registry_.SetDefault(std::make_unique<SizedFake>(0), "0");
  }
  int loads_ = 0;
  ModelRegistry registry_;
};

TEST_F(ModelRegistryTest, KeysACheckpointByPrecision) {
  using encoder::Precision;
  auto f32 = registry_.Acquire("1", "fake-8-1", Precision::kF32);
  auto bf16 = registry_.Acquire("1", "fake-8-1", Precision::kBf16);
  auto bf16_again = registry_.Acquire("1", "fake-8-1", Precision::kBf16);
  ASSERT_TRUE(f32.ok() && bf16.ok() && bf16_again.ok());
  EXPECT_NE(f32->get(), bf16->get());  // the precision changes the vectors: two copies
  EXPECT_EQ(bf16->get(), bf16_again->get());
  EXPECT_EQ((*bf16)->precision, Precision::kBf16);
  EXPECT_EQ((*bf16)->embedder->precision(), Precision::kBf16);
  EXPECT_EQ(loads_, 2);
  // The default model ("0", F32) serves F32 only; INT8 of it is a load.
  auto def = registry_.Acquire("0", "fake-8-0", Precision::kF32);
  ASSERT_TRUE(def.ok());
  EXPECT_EQ(def->get(), registry_.Default().get());
  auto def_int8 = registry_.Acquire("0", "fake-8-0", Precision::kInt8);
  ASSERT_TRUE(def_int8.ok());
  EXPECT_NE(def_int8->get(), registry_.Default().get());
  EXPECT_EQ(loads_, 3);
}

TEST_F(ModelRegistryTest, SharesOneLoadPerCheckpoint) {
  auto a = registry_.Acquire("1", "fake-8-1");
  auto b = registry_.Acquire("1", "fake-8-1");
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_EQ(a->get(), b->get());
  EXPECT_EQ(loads_, 1);
  // The default is found by its directory or by the empty one.
  EXPECT_EQ(registry_.Acquire("0", "fake-8-0")->get(), registry_.Default().get());
  EXPECT_EQ(registry_.Acquire("", "fake-8-0")->get(), registry_.Default().get());
  EXPECT_EQ(loads_, 1);
}

TEST_F(ModelRegistryTest, ChecksTheContentHash) {
  auto m = registry_.Acquire("1", "fake-8-9");
  EXPECT_EQ(m.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_NE(m.status().message().find("fake-8-1"), std::string::npos) << m.status();
  EXPECT_EQ(registry_.Acquire("missing", "x").status().code(),
            absl::StatusCode::kFailedPrecondition);
}

TEST_F(ModelRegistryTest, UnloadsTheLeastRecentlyUsedPastTheCap) {
  // Default (100) + 1 (100) fit under 250; a third model evicts model 1,
  // the least recently used, never the default.
  auto one = registry_.Acquire("1", "fake-8-1");
  ASSERT_TRUE(one.ok());
  ASSERT_TRUE(registry_.Acquire("2", "fake-8-2").ok());
  EXPECT_EQ(registry_.loaded(), 2u);
  EXPECT_EQ(registry_.loaded_bytes(), 200u);
  // Model 1 was unloaded from the registry but its user still holds it.
  EXPECT_EQ((*one)->embedder->model_id(), "fake-8-1");
  ASSERT_TRUE(registry_.Acquire("2", "fake-8-2").ok());
  EXPECT_EQ(loads_, 2);
  ASSERT_TRUE(registry_.Acquire("1", "fake-8-1").ok());  // reloaded, evicting 2
  EXPECT_EQ(loads_, 3);
  EXPECT_EQ(registry_.loaded(), 2u);
  EXPECT_EQ(registry_.Default()->embedder->model_id(), "fake-8-0");
}

TEST_F(ModelRegistryTest, ClearRefusesLaterUse) {
  registry_.Clear();
  EXPECT_EQ(registry_.Acquire("1", "fake-8-1").status().code(), absl::StatusCode::kUnavailable);
  EXPECT_EQ(registry_.Default(), nullptr);
}

}  // namespace
}  // namespace neodb::engine
