#include "encoder/ops/gemm_cpu.h"

#include <omp.h>

#include <cstdio>
#include <cstdlib>
#include <dnnl.hpp>

#include "common/status_macros.h"

namespace neodb::encoder::ops::cpu {
namespace {

using dnnl::memory;

// The CPU engine, created once and never destroyed. Each call makes its own
// stream (cheap on the CPU), so calls from different threads stay apart.
struct Dnnl {
  dnnl::engine engine{dnnl::engine::kind::cpu, 0};
};
Dnnl& Context() {
  static Dnnl* context = new Dnnl();
  return *context;
}

// Creating a primitive for a shape oneDNN has seen costs a few microseconds
// (its primitive cache, 1024 entries by default); a new shape ~0.2 ms.
// c[m, n] (+)= a[m, k] · op(b), op(b) = b[n, k]ᵀ (trans_b) or b[k, n].
void RunMatmul(memory::data_type src_type, memory::data_type wei_type, memory::data_type dst_type,
               bool trans_b, const void* a, int64_t lda, const void* w, int64_t ldb, int64_t m,
               int64_t n, int64_t k, bool accumulate, void* out, int64_t ldc) {
  try {
    Dnnl& ctx = Context();
    const memory::desc src_md({m, k}, src_type, {lda, 1});
    // trans_b: w is [n, k] row-major, the {k, n} weights matrix with strides {1, ldb}.
    const memory::desc wei_md({k, n}, wei_type,
                              trans_b ? memory::dims{1, ldb} : memory::dims{ldb, 1});
    const memory::desc dst_md({m, n}, dst_type, {ldc, 1});
    dnnl::primitive_attr attr;
    if (accumulate) {
      dnnl::post_ops ops;
      ops.append_sum(1.0f);
      attr.set_post_ops(ops);
    }
    const dnnl::matmul::primitive_desc pd(dnnl::matmul::desc(src_md, wei_md, dst_md), attr,
                                          ctx.engine);
    const dnnl::matmul matmul(pd);
    memory src(src_md, ctx.engine, const_cast<void*>(a));
    memory wei(wei_md, ctx.engine, const_cast<void*>(w));
    memory dst(dst_md, ctx.engine, out);
    dnnl::stream stream(ctx.engine);
    matmul.execute(stream, {{DNNL_ARG_SRC, src}, {DNNL_ARG_WEIGHTS, wei}, {DNNL_ARG_DST, dst}});
    stream.wait();
  } catch (const dnnl::error& e) {
    // Callers check CpuPrecisionFor first, so this is a broken invariant.
    std::fprintf(stderr, "oneDNN matmul failed: %s\n", e.what());
    std::abort();
  }
}

}  // namespace

void SetGemmThreads(int num_threads) { omp_set_num_threads(num_threads < 1 ? 1 : num_threads); }

void Sgemm(bool trans_b, int64_t m, int64_t n, int64_t k, float alpha, const float* a,
           int64_t lda, const float* b, int64_t ldb, float beta, float* c, int64_t ldc) {
  if (m == 0 || n == 0) return;
  const dnnl_status_t status =
      dnnl_sgemm('N', trans_b ? 'T' : 'N', m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
  NEODB_CHECK(status == dnnl_success);
}

void GemmBf16(bool trans_b, int64_t m, int64_t n, int64_t k, const uint16_t* a, int64_t lda,
              const uint16_t* b, int64_t ldb, bool accumulate, float* c, int64_t ldc) {
  if (m == 0 || n == 0) return;
  RunMatmul(memory::data_type::bf16, memory::data_type::bf16, memory::data_type::f32, trans_b, a,
            lda, b, ldb, m, n, k, accumulate, c, ldc);
}

void MatmulBf16(const uint16_t* a, const uint16_t* w, int64_t m, int64_t n, int64_t k,
                bool accumulate, float* out) {
  GemmBf16(/*trans_b=*/true, m, n, k, a, k, w, k, accumulate, out, n);
}

void MatmulU8S8(const uint8_t* a, const int8_t* w, int64_t m, int64_t n, int64_t k,
                int32_t* acc) {
  if (m == 0 || n == 0) return;
  RunMatmul(memory::data_type::u8, memory::data_type::s8, memory::data_type::s32,
            /*trans_b=*/true, a, k, w, k, m, n, k, /*accumulate=*/false, acc, n);
}

}  // namespace neodb::encoder::ops::cpu
