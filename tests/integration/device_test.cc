// `neodb serve --device`, through the real binary: a CUDA request where
// there is none ends the server with the reason (no silent CPU fallback), a
// bad device string is a usage error, and `--device auto` serves on what it
// found (the CPU on a machine without a GPU) and says so in `neodb stats`.
// A collection created with --precision keeps it across a restart, and its
// queries embed in it.
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "encoder/cuda/cuda_backend.h"
#include "encoder/encoder.h"
#include "encoder/ops/cpu_kernels.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "tests/integration/test_env.h"

namespace neodb::testing {
namespace {

std::string ServeArgs(const TestDir& dir, const std::string& device) {
  std::string s = absl::StrCat("serve --listen 127.0.0.1:0 --data-dir ", dir.Sub("data"),
                               " --device ", device);
  for (const auto& a : ModelArgs(dir, 1)) absl::StrAppend(&s, " ", a);
  return s;
}

TEST(DeviceTest, CudaWithoutADeviceIsAnErrorNamingWhatIsMissing) {
  if (encoder::CudaDeviceCount().ok()) GTEST_SKIP() << "a CUDA device is visible here";
  TestDir dir("device_cuda");
  for (const std::string device : {"cuda", "cuda:1"}) {
    CommandResult r = RunNeodbCapture(ServeArgs(dir, device), dir.Sub(""));
    EXPECT_EQ(r.status, 1) << r.err;
    EXPECT_TRUE(absl::StrContains(r.err, "asks for CUDA")) << r.err;
    EXPECT_TRUE(absl::StrContains(r.err, "no CUDA device")) << r.err;
    EXPECT_EQ(r.out, "");  // never reached its listening line
  }
}

TEST(DeviceTest, ABadDeviceIsAUsageError) {
  TestDir dir("device_bad");
  for (const std::string device : {"gpu", "cuda:", "cuda:x", "cuda:-1", "CPU"}) {
    CommandResult r = RunNeodbCapture(ServeArgs(dir, device), dir.Sub(""));
    EXPECT_EQ(r.status, 2) << device << ": " << r.err;
    EXPECT_TRUE(absl::StrContains(r.err, "device must be cpu, cuda, cuda:N or auto"))
        << device << ": " << r.err;
    EXPECT_EQ(r.out, "");
  }
}

TEST(DeviceTest, AutoServesAndStatsSayWhere) {
  TestDir dir("device_auto");
  std::vector<std::string> args = {"--data-dir", dir.Sub("data"), "--device", "auto"};
  for (const auto& a : ModelArgs(dir, 1)) args.push_back(a);
  ServerProcess server(args);
  ASSERT_TRUE(server.Start());
  const std::string at = absl::StrCat(" --server ", server.address());
  ASSERT_EQ(RunNeodbCapture(absl::StrCat("collections create docs", at), dir.Sub("")).status, 0);
  {
    std::ofstream f(dir.Sub("docs.jsonl"));
    f << "{\"id\":\"a\",\"text\":\"alpha beta\"}\n{\"id\":\"b\",\"text\":\"gamma delta\"}\n";
  }
  CommandResult r = RunNeodbCapture(
      absl::StrCat("ingest --collection docs", at, " ", dir.Sub("docs.jsonl")), dir.Sub(""));
  ASSERT_EQ(r.status, 0) << r.err;
  r = RunNeodbCapture(absl::StrCat("search --collection docs -k 2", at, " alpha"), dir.Sub(""));
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_TRUE(absl::StrContains(r.out, "\"a\"")) << r.out;

  r = RunNeodbCapture(absl::StrCat("stats", at), dir.Sub(""));
  ASSERT_EQ(r.status, 0) << r.err;
  const nlohmann::json stats = nlohmann::json::parse(r.out);
#ifdef NEODB_HAVE_ENCODER
  // auto takes a GPU when one is present, the CPU otherwise.
  EXPECT_EQ(stats.at("device"), encoder::CudaDeviceCount().ok() ? "cuda:0" : "cpu") << r.out;
#else
  EXPECT_EQ(stats.at("device"), "cpu") << r.out;  // the fake embedder
#endif
  EXPECT_EQ(stats.at("cpu_kernels"), encoder::CpuKernelInfo()) << r.out;
  EXPECT_EQ(server.Stop(), 0);
}

#ifdef NEODB_HAVE_ENCODER
TEST(DeviceTest, ACollectionKeepsItsPrecisionAcrossARestart) {
  TestDir dir("precision");
  std::vector<std::string> args = {"--data-dir", dir.Sub("data"), "--encoder-threads", "1"};
  for (const auto& a : ModelArgs(dir, 1)) args.push_back(a);
  // What BF16 runs as on this CPU: BF16, or F32 (with a note) without the
  // instructions. The collection must record that, whichever CPU this is.
  encoder::EncoderOptions eo;
  eo.backend.precision = encoder::Precision::kBf16;
  auto enc = encoder::Encoder::Open(ModelDir(dir, 1), eo);
  ASSERT_TRUE(enc.ok()) << enc.status();
  const std::string expected((*enc)->precision() == encoder::Precision::kBf16 ? "bf16" : "f32");

  std::string search_before;
  {
    ServerProcess server(args);
    ASSERT_TRUE(server.Start());
    const std::string at = absl::StrCat(" --server ", server.address());
    CommandResult r = RunNeodbCapture(
        absl::StrCat("collections create docs --precision bf16", at), dir.Sub(""));
    ASSERT_EQ(r.status, 0) << r.err;
    EXPECT_EQ(nlohmann::json::parse(r.out).at("precision"), expected) << r.out;
    r = RunNeodbCapture(absl::StrCat("collections create plain", at), dir.Sub(""));
    ASSERT_EQ(r.status, 0) << r.err;
    EXPECT_EQ(nlohmann::json::parse(r.out).at("precision"), "f32") << r.out;  // the default
    r = RunNeodbCapture(absl::StrCat("collections create bad --precision f16", at), dir.Sub(""));
    EXPECT_EQ(r.status, 2) << r.err;
    EXPECT_TRUE(absl::StrContains(r.err, "precision must be f32, bf16 or int8")) << r.err;
    {
      std::ofstream f(dir.Sub("docs.jsonl"));
      f << "{\"id\":\"a\",\"text\":\"alpha beta\"}\n{\"id\":\"b\",\"text\":\"gamma delta\"}\n";
    }
    r = RunNeodbCapture(absl::StrCat("ingest --collection docs", at, " ", dir.Sub("docs.jsonl")),
                        dir.Sub(""));
    ASSERT_EQ(r.status, 0) << r.err;
    r = RunNeodbCapture(absl::StrCat("search --collection docs -k 2", at, " 'alpha gamma'"),
                        dir.Sub(""));
    ASSERT_EQ(r.status, 0) << r.err;
    search_before = r.out;
    EXPECT_EQ(server.Stop(), 0);
  }
  ServerProcess server(args);
  ASSERT_TRUE(server.Start());
  const std::string at = absl::StrCat(" --server ", server.address());
  CommandResult r = RunNeodbCapture(absl::StrCat("collections describe docs", at), dir.Sub(""));
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(nlohmann::json::parse(r.out).at("precision"), expected) << r.out;
  // Queries embed in the collection's precision after the restart too: the
  // same scores, bit for bit.
  r = RunNeodbCapture(absl::StrCat("search --collection docs -k 2", at, " 'alpha gamma'"),
                      dir.Sub(""));
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out, search_before);
  EXPECT_FALSE(search_before.empty());
  EXPECT_EQ(server.Stop(), 0);
}
#endif

}  // namespace
}  // namespace neodb::testing
