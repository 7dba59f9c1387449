#include "bench/peak.h"

#include <cblas.h>
#include <immintrin.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstring>

#include "encoder/ops/cpu_kernels.h"
#include "encoder/ops/gemm_cpu.h"
#include "encoder/ops/low_precision_linear.h"

namespace neodb::bench {
namespace {

double CpuNow() {
  timespec ts;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return ts.tv_sec + ts.tv_nsec * 1e-9;
}

// Runs body(iters) with growing iteration counts until it takes `seconds`
// of CPU time; returns ops / CPU-second / 1e9 given ops per iteration.
template <typename Body>
double Rate(Body body, double ops_per_iter, double seconds) {
  body(1000);  // warm-up: clocks up, code paged in
  int64_t iters = 100000;
  for (;;) {
    const double t0 = CpuNow();
    body(iters);
    const double t = CpuNow() - t0;
    if (t >= seconds) return ops_per_iter * static_cast<double>(iters) / t / 1e9;
    iters = t > 1e-3 ? static_cast<int64_t>(iters * seconds / t * 1.1) : iters * 16;
  }
}

// 12 independent accumulators: enough to cover FMA latency (4 cycles) on two
// ports. The sum of the accumulators is returned so nothing is elided.
#define NEODB_ACC12(OP) \
  OP(0) OP(1) OP(2) OP(3) OP(4) OP(5) OP(6) OP(7) OP(8) OP(9) OP(10) OP(11)

__attribute__((target("avx2,fma"))) float FmaYmm(int64_t iters) {
  __m256 acc[12];
  const __m256 a = _mm256_set1_ps(0.999f), b = _mm256_set1_ps(1e-4f);
  for (int i = 0; i < 12; ++i) acc[i] = _mm256_set1_ps(static_cast<float>(i));
  for (int64_t it = 0; it < iters; ++it) {
#define OP(i) acc[i] = _mm256_fmadd_ps(acc[i], a, b);
    NEODB_ACC12(OP)
#undef OP
  }
  __m256 s = acc[0];
  for (int i = 1; i < 12; ++i) s = _mm256_add_ps(s, acc[i]);
  float out[8];
  _mm256_storeu_ps(out, s);
  return out[0];
}

__attribute__((target("avx512f"))) float FmaZmm(int64_t iters) {
  __m512 acc[12];
  const __m512 a = _mm512_set1_ps(0.999f), b = _mm512_set1_ps(1e-4f);
  for (int i = 0; i < 12; ++i) acc[i] = _mm512_set1_ps(static_cast<float>(i));
  for (int64_t it = 0; it < iters; ++it) {
#define OP(i) acc[i] = _mm512_fmadd_ps(acc[i], a, b);
    NEODB_ACC12(OP)
#undef OP
  }
  __m512 s = acc[0];
  for (int i = 1; i < 12; ++i) s = _mm512_add_ps(s, acc[i]);
  return _mm512_reduce_add_ps(s);
}

__attribute__((target("avx512f,avx512bf16"))) float DpBf16Zmm(int64_t iters) {
  __m512 acc[12];
  const __m512bh a = (__m512bh)_mm512_set1_epi16(0x3f80), b = (__m512bh)_mm512_set1_epi16(0x3800);
  for (int i = 0; i < 12; ++i) acc[i] = _mm512_set1_ps(static_cast<float>(i));
  for (int64_t it = 0; it < iters; ++it) {
#define OP(i) acc[i] = _mm512_dpbf16_ps(acc[i], a, b);
    NEODB_ACC12(OP)
#undef OP
  }
  __m512 s = acc[0];
  for (int i = 1; i < 12; ++i) s = _mm512_add_ps(s, acc[i]);
  return _mm512_reduce_add_ps(s);
}

__attribute__((target("avx512f,avx512vnni"))) int DpBusdZmm(int64_t iters) {
  __m512i acc[12];
  const __m512i a = _mm512_set1_epi8(3), b = _mm512_set1_epi8(-2);
  for (int i = 0; i < 12; ++i) acc[i] = _mm512_set1_epi32(i);
  for (int64_t it = 0; it < iters; ++it) {
#define OP(i) acc[i] = _mm512_dpbusd_epi32(acc[i], a, b);
    NEODB_ACC12(OP)
#undef OP
  }
  __m512i s = acc[0];
  for (int i = 1; i < 12; ++i) s = _mm512_add_epi32(s, acc[i]);
  return _mm512_reduce_add_epi32(s);
}

__attribute__((target("avx2,avxvnni"))) int DpBusdYmm(int64_t iters) {
  __m256i acc[12];
  const __m256i a = _mm256_set1_epi8(3), b = _mm256_set1_epi8(-2);
  for (int i = 0; i < 12; ++i) acc[i] = _mm256_set1_epi32(i);
  for (int64_t it = 0; it < iters; ++it) {
#define OP(i) acc[i] = _mm256_dpbusd_avx_epi32(acc[i], a, b);
    NEODB_ACC12(OP)
#undef OP
  }
  __m256i s = acc[0];
  for (int i = 1; i < 12; ++i) s = _mm256_add_epi32(s, acc[i]);
  int out[8];
  _mm256_storeu_si256(reinterpret_cast<__m256i*>(out), s);
  return out[0];
}

// AMX: 4 accumulator tiles (16 × 16 F32/S32), 2 A tiles (16 rows × 64 bytes)
// and 2 B tiles; each TDP* instruction is 16·16·(32 BF16 | 64 INT8) MACs.
struct alignas(64) TileConfig {
  uint8_t palette = 1, start_row = 0, reserved[14] = {};
  uint16_t colsb[16] = {};
  uint8_t rows[16] = {};
};

// GCC 12's _tile_loadconfig tells the compiler it reads only 8 bytes, so the
// stores above it are dropped as dead; the barrier keeps all 64.
__attribute__((target("amx-tile"))) void LoadTileConfig(const TileConfig& cfg) {
  __asm__ volatile("" : : "r"(&cfg) : "memory");
  _tile_loadconfig(&cfg);
}

bool RequestAmx() {
  // Linux: a process must ask for the AMX tile-data state (ARCH_REQ_XCOMP_PERM,
  // XFEATURE_XTILEDATA) before using it.
  return syscall(SYS_arch_prctl, 0x1023, 18) == 0;
}

__attribute__((target("amx-tile,amx-bf16"))) void AmxBf16(int64_t iters) {
  TileConfig cfg;
  for (int t = 0; t < 8; ++t) cfg.colsb[t] = 64, cfg.rows[t] = 16;
  LoadTileConfig(cfg);
  _tile_zero(0); _tile_zero(1); _tile_zero(2); _tile_zero(3);
  _tile_zero(4); _tile_zero(5); _tile_zero(6); _tile_zero(7);
  for (int64_t it = 0; it < iters; ++it) {
    _tile_dpbf16ps(0, 4, 6);
    _tile_dpbf16ps(1, 4, 7);
    _tile_dpbf16ps(2, 5, 6);
    _tile_dpbf16ps(3, 5, 7);
  }
  _tile_release();
}

__attribute__((target("amx-tile,amx-int8"))) void AmxInt8(int64_t iters) {
  TileConfig cfg;
  for (int t = 0; t < 8; ++t) cfg.colsb[t] = 64, cfg.rows[t] = 16;
  LoadTileConfig(cfg);
  _tile_zero(0); _tile_zero(1); _tile_zero(2); _tile_zero(3);
  _tile_zero(4); _tile_zero(5); _tile_zero(6); _tile_zero(7);
  for (int64_t it = 0; it < iters; ++it) {
    _tile_dpbusd(0, 4, 6);
    _tile_dpbusd(1, 4, 7);
    _tile_dpbusd(2, 5, 6);
    _tile_dpbusd(3, 5, 7);
  }
  _tile_release();
}

volatile double g_sink = 0;

}  // namespace

std::vector<PeakRow> RegisterPeaks(double seconds) {
  const encoder::CpuFeatures& f = encoder::HostCpuFeatures();
  std::vector<PeakRow> rows;
  auto add = [&](const char* name, const char* kind, bool ok, auto fn, double ops_per_iter) {
    double r = -1;
    if (ok) r = Rate([&](int64_t n) { g_sink = g_sink + fn(n); }, ops_per_iter, seconds);
    rows.push_back({name, kind, r});
  };
  add("F32 FMA ymm (VFMADD231PS, AVX2)", "f32", f.avx2_fma, FmaYmm, 12 * 8 * 2);
  add("F32 FMA zmm (VFMADD231PS, AVX-512)", "f32", f.avx512f, FmaZmm, 12 * 16 * 2);
  add("BF16 zmm (VDPBF16PS)", "bf16", f.avx512_bf16, DpBf16Zmm, 12 * 32 * 2);
  const bool amx = (f.amx_bf16 || f.amx_int8) && RequestAmx();
  add("BF16 AMX (TDPBF16PS)", "bf16", amx && f.amx_bf16,
      [](int64_t n) { AmxBf16(n); return 0.0f; }, 4 * 16 * 16 * 32 * 2);
  add("INT8 ymm (VPDPBUSD, AVX-VNNI)", "int8", f.avx_vnni, DpBusdYmm, 12 * 32 * 2);
  add("INT8 zmm (VPDPBUSD, AVX512_VNNI)", "int8", f.avx512_vnni, DpBusdZmm, 12 * 64 * 2);
  add("INT8 AMX (TDPBUSD)", "int8", amx && f.amx_int8,
      [](int64_t n) { AmxInt8(n); return 0.0f; }, 4 * 16 * 16 * 64 * 2);
  return rows;
}

double BestPeak(const std::vector<PeakRow>& rows, const std::string& kind) {
  double best = 0;
  for (const PeakRow& r : rows) {
    if (r.kind == kind) best = std::max(best, r.gflops);
  }
  return best;
}

double GemmRate(const std::string& which, int64_t m) {
  using encoder::Precision;
  if (which == "bf16" && encoder::CpuPrecisionFor(Precision::kBf16, nullptr) != Precision::kBf16) {
    return -1;
  }
  if (which == "int8" && encoder::CpuPrecisionFor(Precision::kInt8, nullptr) != Precision::kInt8) {
    return -1;
  }
  struct Shape {
    int64_t n, k;
  };
  const Shape shapes[] = {{2304, 768}, {768, 768}, {4096, 768}, {768, 2048}};
  double flops = 0, cpu = 0;
  for (const Shape& s : shapes) {
    // 64-byte aligned, as the encoder's tensors and scratch are.
    using encoder::ops::AlignedVector;
    AlignedVector<float> a(m * s.k, 0.01f), b(s.n * s.k, 0.02f), c(m * s.n);
    AlignedVector<uint16_t> a16(m * s.k, 0x3c00), b16(s.n * s.k, 0x3c00);
    AlignedVector<uint8_t> a8(m * s.k, 3);
    AlignedVector<int8_t> b8(s.n * s.k, -2);
    AlignedVector<int32_t> c32(m * s.n);
    auto run = [&] {
      if (which == "openblas") {
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, m, s.n, s.k, 1.0f, a.data(), s.k,
                    b.data(), s.k, 0.0f, c.data(), s.n);
      } else if (which == "dnnl") {
        encoder::ops::cpu::Sgemm(true, m, s.n, s.k, 1.0f, a.data(), s.k, b.data(), s.k, 0.0f,
                                 c.data(), s.n);
      } else if (which == "bf16") {
        encoder::ops::cpu::MatmulBf16(a16.data(), b16.data(), m, s.n, s.k, false, c.data());
      } else {
        encoder::ops::cpu::MatmulU8S8(a8.data(), b8.data(), m, s.n, s.k, c32.data());
      }
    };
    run();  // warm-up (JIT, page faults)
    const int reps = which == "openblas" || which == "dnnl" ? 2 : 6;
    const double t0 = CpuNow();
    for (int r = 0; r < reps; ++r) run();
    cpu += CpuNow() - t0;
    flops += 2.0 * m * s.n * s.k * reps;
  }
  return flops / cpu / 1e9;
}

}  // namespace neodb::bench
