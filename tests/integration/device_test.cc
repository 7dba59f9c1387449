// `neodb serve --device`, through the real binary: a CUDA request where
// there is none ends the server with the reason (no silent CPU fallback), a
// bad device string is a usage error, and `--device auto` serves on what it
// found (the CPU on a machine without a GPU) and says so in `neodb stats`.
// A collection created with --precision keeps it across a restart, and its
// queries embed in it.
#include <cmath>
#include <fstream>
#include <random>
#include <string>
#include <vector>

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
    // Only a build without CUDA may say it has none.
    EXPECT_EQ(absl::StrContains(r.err, "built without CUDA"), !encoder::CudaBackendCompiled())
        << r.err;
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
  r = RunNeodbCapture(absl::StrCat("search --json --collection docs -k 2", at, " alpha"),
                      dir.Sub(""));
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_TRUE(absl::StrContains(r.out, "\"a\"")) << r.out;

  r = RunNeodbCapture(absl::StrCat("stats --json", at), dir.Sub(""));
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
    r = RunNeodbCapture(absl::StrCat("search --json --collection docs -k 2", at, " 'alpha gamma'"),
                        dir.Sub(""));
    ASSERT_EQ(r.status, 0) << r.err;
    search_before = r.out;
    EXPECT_EQ(server.Stop(), 0);
  }
  ServerProcess server(args);
  ASSERT_TRUE(server.Start());
  const std::string at = absl::StrCat(" --server ", server.address());
  CommandResult r =
      RunNeodbCapture(absl::StrCat("collections describe --json docs", at), dir.Sub(""));
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(nlohmann::json::parse(r.out).at("precision"), expected) << r.out;
  // Queries embed in the collection's precision after the restart too: the
  // same scores, bit for bit.
  r = RunNeodbCapture(absl::StrCat("search --json --collection docs -k 2", at, " 'alpha gamma'"),
                      dir.Sub(""));
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out, search_before);
  EXPECT_FALSE(search_before.empty());
  EXPECT_EQ(server.Stop(), 0);
}

// What `precision` runs as here: itself, or f32 on a CPU without its
// instructions (the collection records what its vectors were computed in).
std::string RunsAs(const TestDir& dir, encoder::Precision precision) {
  encoder::EncoderOptions eo;
  eo.backend.precision = precision;
  auto enc = encoder::Encoder::Open(ModelDir(dir, 1), eo);
  EXPECT_TRUE(enc.ok()) << enc.status();
  if (!enc.ok()) return "?";
  return std::string(encoder::PrecisionName((*enc)->precision()));
}

std::vector<float> VectorOf(const std::string& get_output) {
  return nlohmann::json::parse(get_output).at("vector").get<std::vector<float>>();
}

double Cosine(const std::vector<float>& a, const std::vector<float>& b) {
  double ab = 0, aa = 0, bb = 0;
  for (size_t i = 0; i < a.size() && i < b.size(); ++i) {
    ab += double{a[i]} * b[i];
    aa += double{a[i]} * a[i];
    bb += double{b[i]} * b[i];
  }
  return ab / std::sqrt(aa * bb);
}

// f32, bf16 and int8 collections side by side on one server, holding the same
// documents: each embeds its documents and its queries in its own precision
// (the vectors differ slightly, the rankings agree), and each keeps its
// precision across a restart under another server default.
TEST(DeviceTest, ThreePrecisionsOnOneServerEachKeepItsOwn) {
  TestDir dir("precisions3");
  std::vector<std::string> args = {"--data-dir", dir.Sub("data"), "--encoder-threads", "1"};
  for (const auto& a : ModelArgs(dir, 1)) args.push_back(a);
  const std::vector<std::string> names = {"f32", "bf16", "int8"};
  const std::vector<std::string> runs = {RunsAs(dir, encoder::Precision::kF32),
                                         RunsAs(dir, encoder::Precision::kBf16),
                                         RunsAs(dir, encoder::Precision::kInt8)};
  ASSERT_EQ(runs[0], "f32");
  std::mt19937_64 rng(7);
  std::vector<std::string> texts;
  {
    std::ofstream f(dir.Sub("docs.jsonl"));
    for (int i = 0; i < 24; ++i) {
      texts.push_back(RandomText(rng, 10));
      f << nlohmann::json{{"id", absl::StrCat("d", i)}, {"text", texts.back()}}.dump() << "\n";
    }
  }
  auto search = [&](const std::string& at, const std::string& name, const std::string& q) {
    CommandResult r = RunNeodbCapture(
        absl::StrCat("search --json --mode vector -k 3 --collection c_", name, at, " '", q, "'"),
        dir.Sub(""));
    EXPECT_EQ(r.status, 0) << r.err;
    return r.out;
  };
  std::vector<std::string> before(3);
  {
    ServerProcess server(args);  // server default: f32
    ASSERT_TRUE(server.Start());
    const std::string at = absl::StrCat(" --server ", server.address());
    for (int p = 0; p < 3; ++p) {
      CommandResult r = RunNeodbCapture(
          absl::StrCat("collections create c_", names[p], " --precision ", names[p], at),
          dir.Sub(""));
      ASSERT_EQ(r.status, 0) << r.err;
      EXPECT_EQ(nlohmann::json::parse(r.out).at("precision"), runs[p]) << r.out;
      r = RunNeodbCapture(
          absl::StrCat("ingest --collection c_", names[p], at, " ", dir.Sub("docs.jsonl")),
          dir.Sub(""));
      ASSERT_EQ(r.status, 0) << r.err;
    }
    std::vector<std::vector<float>> vec(3);
    for (int p = 0; p < 3; ++p) {
      // A document's own text finds it first in every precision.
      const std::string out = search(at, names[p], texts[5]);
      ASSERT_FALSE(out.empty());
      EXPECT_EQ(nlohmann::json::parse(out.substr(0, out.find('\n'))).at("id"), "d5") << out;
      before[p] = search(at, names[p], "alpha river north");
      CommandResult r = RunNeodbCapture(
          absl::StrCat("get --include-vector --collection c_", names[p], at, " d0"), dir.Sub(""));
      ASSERT_EQ(r.status, 0) << r.err;
      vec[p] = VectorOf(r.out);
      ASSERT_EQ(vec[p].size(), vec[0].size());
    }
    for (int p = 1; p < 3; ++p) {
      if (runs[p] == "f32") {
        // This CPU lacks the instructions: the same F32 vectors and scores.
        EXPECT_EQ(vec[p], vec[0]) << names[p];
        EXPECT_EQ(before[p], before[0]) << names[p];
        continue;
      }
      // Computed in the collection's own precision: close to F32, not equal;
      // and so are the query's scores.
      EXPECT_NE(vec[p], vec[0]) << names[p];
      EXPECT_GT(Cosine(vec[p], vec[0]), p == 1 ? 0.999 : 0.99) << names[p];
      EXPECT_NE(before[p], before[0]) << names[p];
    }
    EXPECT_EQ(server.Stop(), 0);
  }
  // Restart with another default: the collections keep theirs, and their
  // queries embed in it (the same results, bit for bit); a new collection
  // gets the new default.
  args.push_back("--precision");
  args.push_back("int8");
  ServerProcess server(args);
  ASSERT_TRUE(server.Start());
  const std::string at = absl::StrCat(" --server ", server.address());
  for (int p = 0; p < 3; ++p) {
    CommandResult r = RunNeodbCapture(
        absl::StrCat("collections describe --json c_", names[p], at), dir.Sub(""));
    ASSERT_EQ(r.status, 0) << r.err;
    EXPECT_EQ(nlohmann::json::parse(r.out).at("precision"), runs[p]) << r.out;
    EXPECT_EQ(search(at, names[p], "alpha river north"), before[p]) << names[p];
  }
  CommandResult r = RunNeodbCapture(absl::StrCat("collections create later", at), dir.Sub(""));
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(nlohmann::json::parse(r.out).at("precision"), runs[2]) << r.out;
  EXPECT_EQ(server.Stop(), 0);
}
#endif

}  // namespace
}  // namespace neodb::testing
