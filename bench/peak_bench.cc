// peak_bench: the host's register peaks (F32 FMA, BF16, INT8; AVX2,
// AVX-512, AMX where CPUID has them, n/a elsewhere) and the GEMM rates of
// the libraries at the encoder's projection shapes, per CPU-second, 1 thread.
//
//   peak_bench [--seconds 0.3] [--m 4096]
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "bench/peak.h"
#include "encoder/ops/cpu_kernels.h"
#include "encoder/ops/gemm_cpu.h"

int main(int argc, char** argv) {
  double seconds = 0.3;
  long long m = 4096;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (std::strcmp(argv[i], "--seconds") == 0) {
      seconds = std::atof(argv[i + 1]);
    } else if (std::strcmp(argv[i], "--m") == 0) {
      m = std::atoll(argv[i + 1]);
    } else {
      std::fprintf(stderr, "unknown flag %s\n", argv[i]);
      return 2;
    }
  }
  neodb::encoder::ops::cpu::SetGemmThreads(1);
  std::printf("kernels: %s | 1 thread | per CPU-second\n\n",
              neodb::encoder::CpuKernelInfo().c_str());
  std::printf("| register peak | GFLOP/s (INT8: GOP/s) |\n|---|---:|\n");
  for (const auto& r : neodb::bench::RegisterPeaks(seconds)) {
    if (r.gflops < 0) {
      std::printf("| %s | n/a |\n", r.name.c_str());
    } else {
      std::printf("| %s | %.1f |\n", r.name.c_str(), r.gflops);
    }
    std::fflush(stdout);
  }
  std::printf("\n| GEMM, M = %lld, encoder projection shapes | GFLOP/s (INT8: GOP/s) |\n|---|---:|\n",
              m);
  const char* names[][2] = {{"openblas", "SGEMM, OpenBLAS cblas_sgemm"},
                            {"dnnl", "SGEMM, oneDNN dnnl_sgemm (encoder F32)"},
                            {"bf16", "BF16 matmul, oneDNN (encoder bf16)"},
                            {"int8", "U8xS8 matmul, oneDNN (encoder int8)"}};
  for (auto& n : names) {
    const double r = neodb::bench::GemmRate(n[0], m);
    if (r < 0) {
      std::printf("| %s | n/a |\n", n[1]);
    } else {
      std::printf("| %s | %.1f |\n", n[1], r);
    }
    std::fflush(stdout);
  }
  return 0;
}
