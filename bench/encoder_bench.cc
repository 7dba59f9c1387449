// encoder_bench: CPU forward-pass throughput of the NeoBERT backend in each
// precision against the machine's own ceilings measured in the same run: the
// GEMM rate of that precision (oneDNN, the encoder's kernels) and the
// register peak of its instructions (bench/peak.h).
//
//   encoder_bench [--threads N] [--layers L] [--tokens N] [--reps R]
//                 [--lengths 128,512,...] [--precisions f32,bf16,int8]
//
// Weights are generated in memory (uniform ±0.02, norms at 1; the values do
// not change the work), so no checkpoint is needed. Every step packs
// max(1, tokens / length) sequences of one length. FLOPs are counted as
// 2·T·C·(3C + C + 2F + F) GEMM FLOPs per layer plus 4·T·len·C for attention
// (QKᵀ and PV), whatever the precision (attention stays F32). The GEMM
// reference is the FLOP-weighted rate of the four projection shapes
// (M = 4096 tokens) in the row's precision, re-measured before each row; the
// peak is the best register-only rate of that precision's instructions
// (F32 FMA, BF16 VDPBF16PS/AMX, INT8 VPDPBUSD/AMX), measured once.
#include <cblas.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "bench/peak.h"
#include "encoder/backend.h"
#include "encoder/ops/cpu_kernels.h"
#include "encoder/ops/gemm_cpu.h"
#include "encoder/ops/vec_math_cpu.h"

namespace neodb::encoder {
namespace {

using Clock = std::chrono::steady_clock;

// Wall and process-CPU seconds. The build machine is shared, so the CPU-time
// rates (work per second of CPU this process actually got) are the stable
// figure; the wall-clock rates are what a user sees on an idle machine only.
struct Times {
  double wall = 0, cpu = 0;
};
struct Stopwatch {
  Clock::time_point w0 = Clock::now();
  double c0 = CpuNow();
  static double CpuNow() {
    timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
  }
  Times Elapsed() const {
    return {std::chrono::duration<double>(Clock::now() - w0).count(), CpuNow() - c0};
  }
};

struct Args {
  int threads = 1;
  int layers = 28;
  int64_t tokens = 4096;
  int reps = 1;
  std::vector<int64_t> lengths = {128, 512, 1024, 2048, 4096};
  std::vector<Precision> precisions = {Precision::kF32};
};

uint64_t g_state = 42;
float NextUniform(float scale) {
  uint64_t z = (g_state += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  z ^= z >> 31;
  return static_cast<float>((static_cast<double>(z >> 40) / 16777216.0 * 2 - 1) * scale);
}

Tensor Fill(Shape shape, float scale, float center = 0) {
  Tensor t = Tensor::Empty(std::move(shape), DType::kF32);
  float* p = t.data<float>();
  for (int64_t i = 0; i < t.numel(); ++i) p[i] = center + (scale ? NextUniform(scale) : 0);
  return t;
}

std::shared_ptr<NeoBertWeights> FullSizeWeights(int layers) {
  auto w = std::make_shared<NeoBertWeights>();
  NeoBertConfig& c = w->config;
  c.num_hidden_layers = layers;
  const int64_t h = c.hidden_size, f = 2048;
  w->embeddings = Fill({c.vocab_size, h}, 0.02f);
  for (int i = 0; i < layers; ++i) {
    LayerWeights l;
    l.attention_norm = Fill({h}, 0, 1);
    l.qkv = Fill({3 * h, h}, 0.02f);
    l.wo = Fill({h, h}, 0.02f);
    l.ffn_norm = Fill({h}, 0, 1);
    l.w12 = Fill({2 * f, h}, 0.02f);
    l.w3 = Fill({h, f}, 0.02f);
    w->layers.push_back(std::move(l));
  }
  w->final_norm = Fill({h}, 0, 1);
  w->model_id = "nb-bench";
  return w;
}

std::string CpuModel() {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("model name", 0) == 0) return line.substr(line.find(':') + 2);
  }
  return "unknown";
}

int Main(int argc, char** argv) {
  Args args;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string k = argv[i];
    const char* v = argv[i + 1];
    if (k == "--threads")
      args.threads = std::atoi(v);
    else if (k == "--layers")
      args.layers = std::atoi(v);
    else if (k == "--tokens")
      args.tokens = std::atoll(v);
    else if (k == "--reps")
      args.reps = std::atoi(v);
    else if (k == "--lengths") {
      args.lengths.clear();
      for (const char* p = v; *p;) {
        args.lengths.push_back(std::atoll(p));
        p = std::strchr(p, ',');
        if (!p) break;
        ++p;
      }
    } else if (k == "--precisions") {
      args.precisions.clear();
      std::string list = v;
      for (size_t start = 0; start <= list.size();) {
        size_t end = list.find(',', start);
        if (end == std::string::npos) end = list.size();
        auto p = ParsePrecision(list.substr(start, end - start));
        if (!p.ok()) {
          std::fprintf(stderr, "%s\n", std::string(p.status().message()).c_str());
          return 2;
        }
        args.precisions.push_back(*p);
        start = end + 1;
      }
    } else {
      std::fprintf(stderr, "unknown flag %s\n", k.c_str());
      return 2;
    }
  }
  openblas_set_num_threads(args.threads);
  ops::cpu::SetGemmThreads(args.threads);
  std::printf("cpu: %s | %s | threads %d | vector kernels %s\n", CpuModel().c_str(),
              CpuKernelInfo().c_str(), args.threads,
              ops::cpu::VecIsaName(ops::cpu::ActiveVecIsa()));
  std::printf(
      "model: hidden 768, heads 12, ffn 2048, layers %d; >= %lld tokens per step, %d rep(s)\n",
      args.layers, static_cast<long long>(args.tokens), args.reps);
  std::fflush(stdout);
  // Register peaks, once (1 thread: the loops run on the calling thread).
  const std::vector<bench::PeakRow> peaks = bench::RegisterPeaks();
  std::printf("\nregister peaks (per CPU-second, 1 thread):\n");
  for (const auto& r : peaks) {
    if (r.gflops < 0) {
      std::printf("  %-38s n/a\n", r.name.c_str());
    } else {
      std::printf("  %-38s %.1f\n", r.name.c_str(), r.gflops);
    }
  }
  auto weights = FullSizeWeights(args.layers);
  std::printf(
      "\nwall = wall clock; cpu = per second of CPU time this process got (robust to other\n"
      "load on a shared machine). gemm = the row's precision at the projection shapes,\n"
      "re-measured right before each row; peak = best register-only rate of that\n"
      "precision's instructions (per thread x threads).\n\n");
  std::printf(
      "| precision | seq len | seqs/step | tokens/step | wall s/step | tokens/s (wall) | "
      "tokens/cpu-s | GFLOP/cpu-s | gemm GFLOP/cpu-s | of gemm | peak GFLOP/s | of peak |\n");
  std::printf("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n");
  std::fflush(stdout);
  const double c = 768, f = 2048;
  for (Precision precision : args.precisions) {
    std::string why;
    if (CpuPrecisionFor(precision, &why) != precision) {
      std::printf("| %s | n/a: %s |\n", std::string(PrecisionName(precision)).c_str(),
                  why.c_str());
      continue;
    }
    auto backend = MakeCpuBackend(weights, args.threads, precision);
    const std::string gemm_name = precision == Precision::kF32    ? "dnnl"
                                  : precision == Precision::kBf16 ? "bf16"
                                                                  : "int8";
    const double peak =
        bench::BestPeak(peaks, std::string(PrecisionName(precision))) * args.threads;
    for (int64_t len : args.lengths) {
      const int64_t seqs = std::max<int64_t>(1, args.tokens / len);
      PackedBatch batch;
      for (int64_t s = 0; s < seqs; ++s) {
        std::vector<int32_t> ids(len);
        for (int64_t t = 0; t < len; ++t)
          ids[t] = static_cast<int32_t>((s * 7919 + t * 104729) % 30522);
        batch.Add(ids);
      }
      const double tokens = static_cast<double>(batch.total_tokens());
      const double flops = args.layers * (2 * tokens * c * (3 * c + c + 2 * f + f) +
                                          4.0 * tokens * static_cast<double>(len) * c);
      auto warm = backend->Pool(batch, Pooling::kMean);  // sizes the scratch, faults pages in
      if (!warm.ok()) {
        std::fprintf(stderr, "%s\n", std::string(warm.status().message()).c_str());
        return 1;
      }
      const double gemm = bench::GemmRate(gemm_name, 4096);
      Times best{1e30, 1e30};
      for (int r = 0; r < args.reps; ++r) {
        Stopwatch sw;
        auto out = backend->Pool(batch, Pooling::kMean);
        const Times t = sw.Elapsed();
        best.wall = std::min(best.wall, t.wall);
        best.cpu = std::min(best.cpu, t.cpu);
        if (!out.ok()) return 1;
      }
      const double cpu_gflops = flops / best.cpu / 1e9;
      std::printf(
          "| %s | %lld | %lld | %.0f | %.3f | %.0f | %.0f | %.1f | %.1f | %.0f%% | %.1f | "
          "%.0f%% |\n",
          std::string(PrecisionName(precision)).c_str(), static_cast<long long>(len),
          static_cast<long long>(seqs), tokens, best.wall, tokens / best.wall, tokens / best.cpu,
          cpu_gflops, gemm, 100 * cpu_gflops / gemm, peak,
          peak > 0 ? 100 * cpu_gflops / peak : 0.0);
      std::fflush(stdout);
    }
  }
  return 0;
}

}  // namespace
}  // namespace neodb::encoder

int main(int argc, char** argv) { return neodb::encoder::Main(argc, argv); }
