#include "encoder/ops/cpu_kernels.h"

#include <cblas.h>
#include <cpuid.h>
#include <dnnl.h>

#include <cstdint>
#include <string>

#include "absl/strings/str_cat.h"

extern "C" char* openblas_get_corename(void);

namespace neodb::encoder {
namespace {

uint64_t Xgetbv0() {
  uint32_t eax, edx;
  __asm__ volatile("xgetbv" : "=a"(eax), "=d"(edx) : "c"(0));
  return (static_cast<uint64_t>(edx) << 32) | eax;
}

CpuFeatures Detect() {
  CpuFeatures f;
  unsigned a, b, c, d;
  if (!__get_cpuid(1, &a, &b, &c, &d)) return f;
  const bool osxsave = (c >> 27) & 1;
  const bool fma = (c >> 12) & 1;
  if (!osxsave) return f;
  const uint64_t xcr0 = Xgetbv0();
  const bool os_ymm = (xcr0 & 0x6) == 0x6;
  const bool os_zmm = os_ymm && (xcr0 & 0xe0) == 0xe0;
  const bool os_tiles = (xcr0 & 0x60000) == 0x60000;  // XTILECFG | XTILEDATA
  if (__get_cpuid_max(0, nullptr) < 7) return f;
  __cpuid_count(7, 0, a, b, c, d);
  const uint32_t b7 = b, c7 = c, d7 = d;
  __cpuid_count(7, 1, a, b, c, d);
  const uint32_t a71 = a;
  f.avx2_fma = os_ymm && fma && ((b7 >> 5) & 1);
  f.avx512f = os_zmm && ((b7 >> 16) & 1);
  f.avx512_vnni = f.avx512f && ((c7 >> 11) & 1);
  f.avx512_bf16 = f.avx512f && ((a71 >> 5) & 1);
  f.avx_vnni = os_ymm && ((a71 >> 4) & 1);
  f.amx_bf16 = os_tiles && ((d7 >> 22) & 1) && ((d7 >> 24) & 1);
  f.amx_int8 = os_tiles && ((d7 >> 25) & 1) && ((d7 >> 24) & 1);
  return f;
}

const char* DnnlIsaName(dnnl_cpu_isa_t isa) {
  switch (isa) {
    case dnnl_cpu_isa_sse41: return "sse41";
    case dnnl_cpu_isa_avx: return "avx";
    case dnnl_cpu_isa_avx2: return "avx2";
    case dnnl_cpu_isa_avx2_vnni: return "avx2_vnni";
    case dnnl_cpu_isa_avx512_mic: return "avx512_mic";
    case dnnl_cpu_isa_avx512_mic_4ops: return "avx512_mic_4ops";
    case dnnl_cpu_isa_avx512_core: return "avx512_core";
    case dnnl_cpu_isa_avx512_core_vnni: return "avx512_core_vnni";
    case dnnl_cpu_isa_avx512_core_bf16: return "avx512_core_bf16";
    case dnnl_cpu_isa_avx512_core_amx: return "avx512_core_amx";
    default: return "baseline";
  }
}

}  // namespace

const CpuFeatures& HostCpuFeatures() {
  static const CpuFeatures features = Detect();
  return features;
}

std::string CpuKernelInfo() {
  const dnnl_version_t* v = dnnl_version();
  return absl::StrCat("oneDNN ", v->major, ".", v->minor, ".", v->patch, " ",
                      DnnlIsaName(dnnl_get_effective_cpu_isa()), " (encoder GEMMs); OpenBLAS ",
                      openblas_get_corename(), " (training)");
}

Precision CpuPrecisionFor(Precision requested, std::string* why) {
  const CpuFeatures& f = HostCpuFeatures();
  // oneDNN's own view as well: DNNL_MAX_CPU_ISA may cap it below the CPU.
  const unsigned isa = static_cast<unsigned>(dnnl_get_effective_cpu_isa());
  auto has = [isa](dnnl_cpu_isa_t want) {
    return (isa & static_cast<unsigned>(want)) == static_cast<unsigned>(want);
  };
  switch (requested) {
    case Precision::kF32:
      return requested;
    case Precision::kBf16:
      if ((f.avx512_bf16 || f.amx_bf16) && has(dnnl_cpu_isa_avx512_core_bf16)) return requested;
      if (why != nullptr) {
        *why = "bf16 needs AVX512_BF16 or AMX-BF16, which this CPU (or DNNL_MAX_CPU_ISA) does not offer: running in F32";
      }
      return Precision::kF32;
    case Precision::kInt8:
      // INT8 needs VNNI: without it oneDNN's u8·s8 kernels use VPMADDUBSW,
      // whose 16-bit pair sums saturate on full-range activations.
      if ((f.avx512_vnni || f.avx_vnni || f.amx_int8) &&
          (has(dnnl_cpu_isa_avx512_core_vnni) || has(dnnl_cpu_isa_avx2_vnni))) {
        return requested;
      }
      if (why != nullptr) {
        *why = "int8 needs AVX512_VNNI, AVX-VNNI or AMX-INT8, which this CPU (or DNNL_MAX_CPU_ISA) does not offer: running in F32";
      }
      return Precision::kF32;
  }
  return Precision::kF32;
}

bool CpuRunsAmxBf16() {
  const unsigned isa = static_cast<unsigned>(dnnl_get_effective_cpu_isa());
  const unsigned amx = static_cast<unsigned>(dnnl_cpu_isa_avx512_core_amx);
  return HostCpuFeatures().amx_bf16 && (isa & amx) == amx;
}

}  // namespace neodb::encoder
