// LazyEmbedder: the model is checked at Open and then let go; the first call
// that needs it loads it once (however many threads ask at once), refuses a
// model whose files changed since, and retries a load that failed.
#include "engine/lazy_embedder.h"

#include <atomic>
#include <thread>
#include <vector>

#include "engine/fake_embedder.h"
#include "gtest/gtest.h"

namespace neodb::engine {
namespace {

// A fake that claims 1000 bytes of weights and counts the live instances, so
// a test can see the weights let go.
std::atomic<int> g_live{0};
class CountedFake : public FakeEmbedder {
 public:
  explicit CountedFake(uint64_t seed, int dim = 8) : FakeEmbedder(dim, 32, seed) { ++g_live; }
  ~CountedFake() override { --g_live; }
  size_t memory_bytes() const override { return 1000; }
  std::string device() const override { return "cpu"; }
};

// What the loader returns on its next call: the model of `seed` and `dim`,
// or `error` when it is not OK.
struct Files {
  std::atomic<int> loads{0};
  uint64_t seed = 7;
  int dim = 8;
  absl::Status error;
  LazyEmbedder::Loader Loader() {
    return [this]() -> absl::StatusOr<std::unique_ptr<Embedder>> {
      ++loads;
      if (!error.ok()) return error;
      return std::unique_ptr<Embedder>(new CountedFake(seed, dim));
    };
  }
};

TEST(LazyEmbedderTest, OpenDescribesTheModelAndLetsItsWeightsGo) {
  Files files;
  const int live_before = g_live.load();
  absl::StatusOr<std::unique_ptr<LazyEmbedder>> lazy = LazyEmbedder::Open(files.Loader());
  ASSERT_TRUE(lazy.ok()) << lazy.status();
  EXPECT_EQ(files.loads.load(), 1);
  EXPECT_EQ(g_live.load(), live_before);  // the checked model was destroyed
  EXPECT_FALSE((*lazy)->loaded());
  const CountedFake eager(7);
  EXPECT_EQ((*lazy)->model_id(), eager.model_id());
  EXPECT_EQ((*lazy)->dim(), 8);
  EXPECT_EQ((*lazy)->max_tokens(), 32);
  EXPECT_EQ((*lazy)->memory_bytes(), 1000u);
  EXPECT_EQ((*lazy)->device(), "cpu");
  EXPECT_EQ(files.loads.load(), 1);  // none of these loads it
}

TEST(LazyEmbedderTest, OpenFailsWithTheLoadersError) {
  Files files;
  files.error = absl::InvalidArgumentError("config.json: hidden_size is missing");
  absl::StatusOr<std::unique_ptr<LazyEmbedder>> lazy = LazyEmbedder::Open(files.Loader());
  ASSERT_FALSE(lazy.ok());
  EXPECT_EQ(lazy.status(), files.error);
}

TEST(LazyEmbedderTest, FirstUseLoadsOnceAndGivesTheEagerModelsResults) {
  Files files;
  std::unique_ptr<LazyEmbedder> lazy = *LazyEmbedder::Open(files.Loader());
  CountedFake eager(7);
  const std::vector<std::string> texts = {"alpha beta", "gamma delta epsilon"};
  absl::StatusOr<std::vector<encoder::Embedding>> got = lazy->Embed(texts, {});
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_TRUE(lazy->loaded());
  EXPECT_EQ(files.loads.load(), 2);
  absl::StatusOr<std::vector<encoder::Embedding>> want = eager.Embed(texts, {});
  ASSERT_TRUE(want.ok());
  ASSERT_EQ(got->size(), want->size());
  for (size_t i = 0; i < got->size(); ++i) EXPECT_EQ((*got)[i].vector, (*want)[i].vector);

  // Every other call is served by the loaded model: no further load.
  EXPECT_EQ(*lazy->CountTokens("query: ", "one two three"),
            *eager.CountTokens("query: ", "one two three"));
  absl::StatusOr<encoder::FramedTexts> framed = lazy->Frame(texts, {});
  ASSERT_TRUE(framed.ok());
  EXPECT_EQ(framed->sequences, eager.Frame(texts, {})->sequences);
  EXPECT_EQ(*lazy->Pool(framed->sequences, encoder::Pooling::kMean),
            *eager.Pool(framed->sequences, encoder::Pooling::kMean));
  EXPECT_EQ(files.loads.load(), 2);
}

TEST(LazyEmbedderTest, ConcurrentFirstUsesLoadOnce) {
  Files files;
  std::unique_ptr<LazyEmbedder> lazy = *LazyEmbedder::Open(files.Loader());
  std::vector<std::thread> threads;
  std::atomic<int> ok{0};
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&, t] {
      if (lazy->CountTokens("", "word " + std::to_string(t)).ok()) ++ok;
    });
  }
  for (std::thread& t : threads) t.join();
  EXPECT_EQ(ok.load(), 8);
  EXPECT_EQ(files.loads.load(), 2);  // Open's, and one first use
}

TEST(LazyEmbedderTest, RefusesAModelWhoseFilesChangedSinceOpen) {
  Files files;
  std::unique_ptr<LazyEmbedder> lazy = *LazyEmbedder::Open(files.Loader());
  files.seed = 8;  // other weights: another content hash
  absl::StatusOr<std::vector<encoder::Embedding>> got = lazy->Embed({"text"}, {});
  ASSERT_FALSE(got.ok());
  EXPECT_EQ(got.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_NE(got.status().message().find("changed since the server started"), std::string::npos)
      << got.status();
  EXPECT_FALSE(lazy->loaded());

  files.seed = 7;
  files.dim = 16;  // same seed, another dimension
  EXPECT_EQ(lazy->CountTokens("", "text").status().code(), absl::StatusCode::kFailedPrecondition);

  files.dim = 8;  // the files restored: the next call loads
  EXPECT_TRUE(lazy->Embed({"text"}, {}).ok());
  EXPECT_TRUE(lazy->loaded());
}

TEST(LazyEmbedderTest, AFailedLoadIsRetriedOnTheNextCall) {
  Files files;
  std::unique_ptr<LazyEmbedder> lazy = *LazyEmbedder::Open(files.Loader());
  files.error = absl::ResourceExhaustedError("out of memory");
  absl::StatusOr<encoder::FramedTexts> framed = lazy->Frame({"text"}, {});
  ASSERT_FALSE(framed.ok());
  EXPECT_EQ(framed.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_NE(framed.status().message().find("out of memory"), std::string::npos);
  EXPECT_NE(framed.status().message().find(lazy->model_id()), std::string::npos);
  files.error = absl::OkStatus();
  EXPECT_TRUE(lazy->Frame({"text"}, {}).ok());
  EXPECT_EQ(files.loads.load(), 3);
}

}  // namespace
}  // namespace neodb::engine
