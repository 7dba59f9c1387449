#pragma once
// Warp-level tensor-core helpers shared by the attention kernels
// (mma.sync m16n8k16 with F32 accumulate, ldmatrix, cp.async).
//
// Fragment layouts (PTX ISA, mma.m16n8k16 with 16-bit A/B): g = lane / 4,
// c = lane % 4. A (16×16, row): reg0 = A[g][2c..2c+1], reg1 = A[g+8][2c..],
// reg2 = A[g][2c+8..], reg3 = A[g+8][2c+8..]. B (16×8, col): reg0 =
// B[2c..2c+1][g], reg1 = B[2c+8..2c+9][g]. C (16×8): c0,c1 = C[g][2c..2c+1],
// c2,c3 = C[g+8][2c..2c+1]. The C fragments of two adjacent n-tiles are, after
// packing to 16 bits, exactly an A fragment (FlashAttention-2's register
// reuse of P).

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstdint>
#include <type_traits>

namespace neodb::encoder::cuda {

template <typename T>
__device__ __forceinline__ uint32_t Pack2(float lo, float hi);
template <>
__device__ __forceinline__ uint32_t Pack2<__nv_bfloat16>(float lo, float hi) {
  __nv_bfloat162 p = __floats2bfloat162_rn(lo, hi);
  return *reinterpret_cast<uint32_t*>(&p);
}
template <>
__device__ __forceinline__ uint32_t Pack2<__half>(float lo, float hi) {
  __half2 p = __floats2half2_rn(lo, hi);
  return *reinterpret_cast<uint32_t*>(&p);
}

// d += a · b for one m16n8k16 tile, F32 accumulate.
template <typename T>
__device__ __forceinline__ void Mma(float (&d)[4], const uint32_t (&a)[4], uint32_t b0,
                                    uint32_t b1) {
  if constexpr (std::is_same_v<T, __nv_bfloat16>) {
    asm volatile(
        "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 "
        "{%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
  } else {
    asm volatile(
        "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 "
        "{%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
  }
}

template <typename T>
__device__ __forceinline__ uint32_t Ld32(const T* p) {
  return *reinterpret_cast<const uint32_t*>(p);
}

// Four 8×8 16-bit matrices from shared memory, transposed: lane l gives the
// address of row (l % 8) of matrix (l / 8) (16 contiguous bytes, 16-byte
// aligned); afterwards reg i of thread t holds column t / 4, rows 2(t % 4) and
// 2(t % 4) + 1 of matrix i — the B fragment layout when the stored rows are
// the k dimension.
__device__ __forceinline__ void LdMatrixX4Trans(const void* smem_row, uint32_t (&r)[4]) {
  const uint32_t addr = static_cast<uint32_t>(__cvta_generic_to_shared(smem_row));
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0,%1,%2,%3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(addr));
}

// 16-byte asynchronous copy global → shared; `valid` false zero-fills the
// destination without reading the source.
__device__ __forceinline__ void CpAsync16(void* smem, const void* gmem, bool valid) {
  const uint32_t addr = static_cast<uint32_t>(__cvta_generic_to_shared(smem));
  const int src_bytes = valid ? 16 : 0;
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(addr), "l"(gmem),
               "r"(src_bytes));
}
__device__ __forceinline__ void CpAsyncCommit() { asm volatile("cp.async.commit_group;\n" ::); }
template <int kPending>
__device__ __forceinline__ void CpAsyncWait() {
  asm volatile("cp.async.wait_group %0;\n" ::"n"(kPending));
}

}  // namespace neodb::encoder::cuda
