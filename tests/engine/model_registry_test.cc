// ModelRegistry: one load per checkpoint shared by its users, the content
// hash checked, least recently used models unloaded past the byte cap (the
// default never), and a model still in use surviving its unloading.
#include "api/engine/model_registry.h"

#include "api/engine/fake_embedder.h"
#include "gtest/gtest.h"

namespace neodb::engine {
namespace {

// A fake model that claims 100 bytes of weights.
class SizedFake : public FakeEmbedder {
 public:
  explicit SizedFake(uint64_t seed) : FakeEmbedder(8, 32, seed) {}
  size_t memory_bytes() const override { return 100; }
};

class ModelRegistryTest : public ::testing::Test {
 protected:
  ModelRegistryTest()
      : registry_(
            [this](const std::string& dir) -> absl::StatusOr<std::unique_ptr<Embedder>> {
              ++loads_;
              if (dir == "missing") return absl::NotFoundError("no such directory");
              return std::unique_ptr<Embedder>(new SizedFake(std::stoull(dir)));
            },
            ModelRegistryOptions{.max_bytes = 250}) {
    registry_.SetDefault(std::make_unique<SizedFake>(0), "0");
  }
  int loads_ = 0;
  ModelRegistry registry_;
};

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
