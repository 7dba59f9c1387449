#pragma once
// Which CPU kernels the encoder runs on this host, decided from CPUID
// features at run time (never from the CPU's model number), and whether a
// reduced precision has the instructions it needs.
//
// The encoder's GEMMs go through oneDNN (gemm_cpu.h), which JIT-compiles its
// kernels for the ISA CPUID reports: AVX-512 where the CPU has it, AVX2
// where it has only that, AMX tiles for BF16/INT8 where present. OpenBLAS
// (which picks its core type from the CPU model when it loads, and falls back
// to AVX2 kernels on CPUs it does not know) is left to the training code.
//
// Thread-safety: every function here is safe to call from any thread.

#include <string>

#include "encoder/backend.h"

namespace neodb::encoder {

// Instruction-set features of the host, read once with CPUID/XGETBV (a
// feature counts only when the OS also saves its register state).
struct CpuFeatures {
  bool avx2_fma = false;     // AVX2 + FMA3
  bool avx512f = false;      // AVX-512 Foundation (zmm registers)
  bool avx512_bf16 = false;  // VDPBF16PS
  bool avx512_vnni = false;  // VPDPBUSD on zmm
  bool avx_vnni = false;     // VPDPBUSD, VEX-encoded (ymm)
  bool amx_bf16 = false;     // AMX tiles, TDPBF16PS
  bool amx_int8 = false;     // AMX tiles, TDPBUSD/TDPBSSD
};
const CpuFeatures& HostCpuFeatures();

// One line naming the kernels in use, e.g.
// "oneDNN 2.6.3 avx512_core_amx (encoder GEMMs); OpenBLAS 0.3.21 SkylakeX (training)".
std::string CpuKernelInfo();

// The precision the CPU backend will run for `requested`: `requested` when
// the host has the instructions (BF16: AVX512_BF16 or AMX-BF16; INT8: a VNNI
// flavour or AMX-INT8), else kF32 with *why (if not null) set to a message
// naming the missing instructions. F32 is always available.
Precision CpuPrecisionFor(Precision requested, std::string* why);

// Whether oneDNN runs BF16 matmuls on AMX tiles here (AMX-BF16 and an
// effective ISA of avx512_core_amx). Without AMX, oneDNN 2.6's BF16 matmuls
// ran at 0.56x its SGEMM on this project's Sapphire-Rapids-class host (ISA
// capped to avx512_core_bf16), so the reduced precisions keep the attention
// in F32 there.
bool CpuRunsAmxBf16();

}  // namespace neodb::encoder
