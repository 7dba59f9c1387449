#pragma once
// cuBLASLt, opened when the first CUDA context is made rather than linked.
//
// Why: libcublasLt.so is ~400 MB, and loading it (the dynamic linker's
// relocations of its data) made 60-150 MiB resident in every neodb process
// of a CUDA build, the CPU-only ones included: the server at rest, every CLI
// command, every test. Opened on demand, a process that never asks for a GPU
// never maps it.
//
// Every entry point the backend calls is resolved once, by name, with the
// type cublasLt.h declares for it (decltype), so a call through the table is
// checked by the compiler exactly as a direct call is.
//
// Thread-safety: LoadCublasLt may be called from any thread (it opens the
// library once); the table it returns is immutable.

#include <cublasLt.h>

#include <string>

#include "common/status_macros.h"

namespace neodb::encoder::cuda {

struct CublasLtApi {
  decltype(&::cublasLtCreate) Create = nullptr;
  decltype(&::cublasLtDestroy) Destroy = nullptr;
  decltype(&::cublasLtGetStatusName) GetStatusName = nullptr;
  decltype(&::cublasLtGetStatusString) GetStatusString = nullptr;
  decltype(&::cublasLtMatmul) Matmul = nullptr;
  decltype(&::cublasLtMatmulAlgoGetHeuristic) MatmulAlgoGetHeuristic = nullptr;
  decltype(&::cublasLtMatmulDescCreate) MatmulDescCreate = nullptr;
  decltype(&::cublasLtMatmulDescDestroy) MatmulDescDestroy = nullptr;
  decltype(&::cublasLtMatmulDescSetAttribute) MatmulDescSetAttribute = nullptr;
  decltype(&::cublasLtMatmulPreferenceCreate) MatmulPreferenceCreate = nullptr;
  decltype(&::cublasLtMatmulPreferenceDestroy) MatmulPreferenceDestroy = nullptr;
  decltype(&::cublasLtMatmulPreferenceSetAttribute) MatmulPreferenceSetAttribute = nullptr;
  decltype(&::cublasLtMatrixLayoutCreate) MatrixLayoutCreate = nullptr;
  decltype(&::cublasLtMatrixLayoutDestroy) MatrixLayoutDestroy = nullptr;
};

// The process's cuBLASLt: opens the library the build was linked against
// (its full path, then its soname through the loader's search path) on the
// first call and resolves every entry of CublasLtApi. UNAVAILABLE, naming
// the library and the loader's reason, when it cannot be opened or lacks an
// entry; later calls return the same answer.
absl::StatusOr<const CublasLtApi*> LoadCublasLt();

// The same from one explicit file (tests); not cached.
absl::StatusOr<CublasLtApi> LoadCublasLtFrom(const std::string& path);

// The loaded table. REQUIRES: LoadCublasLt() has succeeded (CudaContext::Create
// does it before anything else touches cuBLASLt).
const CublasLtApi& Lt();

}  // namespace neodb::encoder::cuda
