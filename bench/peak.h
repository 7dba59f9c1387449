#pragma once
// The host's own ceilings, measured in the run that reports against them:
// register-only peaks of the F32, BF16 and INT8 multiply-add instructions
// (loops with target attributes, run only where CPUID says the instruction
// exists) and the GEMM rates of the libraries the encoder uses, at the
// encoder's projection shapes. Rates are per second of process CPU time, so a
// shared machine's other load does not lower them.

#include <string>
#include <vector>

namespace neodb::bench {

struct PeakRow {
  std::string name;   // e.g. "F32 FMA zmm (VFMADD231PS)"
  std::string kind;   // "f32", "bf16", "int8"
  double gflops = 0;  // GFLOP (or GOP for INT8) per CPU-second; < 0: n/a
};

// Register-only loops: F32 FMA on ymm and zmm, BF16 VDPBF16PS on zmm, AMX
// TDPBF16PS, INT8 VPDPBUSD on ymm (AVX-VNNI) and zmm, AMX TDPBUSD. Each runs
// for about `seconds` of CPU time; unsupported ones come back with gflops −1.
std::vector<PeakRow> RegisterPeaks(double seconds = 0.3);

// The best row of `rows` of `kind` (0 when none ran).
double BestPeak(const std::vector<PeakRow>& rows, const std::string& kind);

// FLOP-weighted GEMM rate over the encoder's four projection shapes
// (M = m tokens; N×K = 2304×768, 768×768, 4096×768, 768×2048; B transposed)
// for "openblas" (cblas_sgemm), "dnnl" (dnnl_sgemm, what the F32 encoder
// uses), "bf16" and "int8" (the encoder's oneDNN matmuls). −1 when the host
// does not run that precision.
double GemmRate(const std::string& which, int64_t m = 4096);

}  // namespace neodb::bench
