// `neodb --version`: what this binary is and how it was built, so a bug
// report can say so in one paste.
#include <cstdio>
#include <string>

#include "absl/strings/str_cat.h"
#include "encoder/ops/cpu_kernels.h"
#include "tools/neodb/commands.h"

// OpenBLAS names the kernel it picked for this CPU at run time.
extern "C" char* openblas_get_corename(void);
extern "C" char* openblas_get_config(void);

namespace neodb::cli {

std::string VersionText() {
  std::string s = absl::StrCat("neodb ", NEODB_VERSION, " (git ", NEODB_GIT_HASH, ")\n");
  absl::StrAppend(&s, "build: ", NEODB_BUILD_TYPE,
#ifdef NEODB_BUILD_SERVER
                  ", server",
#else
                  ", encoder only",
#endif
#ifdef NEODB_HAVE_CUDA
                  ", cuda",
#else
                  ", no cuda",
#endif
#ifdef NEODB_NATIVE_BUILD
                  ", -march=native",
#endif
#if defined(__SANITIZE_ADDRESS__)
                  ", asan",
#endif
                  "\n");
  absl::StrAppend(&s, "blas: ", openblas_get_config(), " (kernel ", openblas_get_corename(), ")\n");
  absl::StrAppend(&s, "encoder kernels: ", encoder::CpuKernelInfo(), "\n");
  std::string cpu;
  __builtin_cpu_init();
  if (__builtin_cpu_supports("sse4.2")) cpu += " sse4.2";
  if (__builtin_cpu_supports("avx")) cpu += " avx";
  if (__builtin_cpu_supports("avx2")) cpu += " avx2";
  if (__builtin_cpu_supports("fma")) cpu += " fma";
  if (__builtin_cpu_supports("f16c")) cpu += " f16c";
  if (__builtin_cpu_supports("avx512f")) cpu += " avx512f";
  absl::StrAppend(
      &s, "cpu features:", cpu.empty() ? " (none of sse4.2 avx avx2 fma f16c avx512f)" : cpu, "\n");
  return s;
}

}  // namespace neodb::cli
