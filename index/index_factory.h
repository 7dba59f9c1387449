#pragma once
// Creating, loading and validating vector indexes from FAISS-style specs.

#include <memory>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "common/env.h"
#include "index/vector_index.h"

namespace neodb::index {

// Supported specs (whitespace not allowed):
//   "Flat"           exact search (own BLAS kernels; see bench/README.md ## Index)
//   "HNSW<M>"        FAISS HNSW, M in 4..128 (also accepted: "HNSW<M>,Flat")
//   "IVF<n>,PQ<m>"   FAISS IVF-PQ, n in 1..65536 lists, m sub-quantizers (8-bit)
//                    dividing the dimension. Untrained until 39*n vectors (and
//                    at least 256) are present; until then searches are exact.
// followed by tunables as ",name=value" (FAISS ParameterSpace names), which
// persist with the spec:
//   HNSW: efConstruction=1..2048 (default 40), efSearch=1..2048 (default 64),
//         exactBelow=0..1000000000 (vectors; default 4M floats / dimension)
//   IVF:  nprobe=1..65536 (default max(8, n / 16))
// VectorIndex::spec() gives the canonical form: only non-default tunables.
// INVALID_ARGUMENT names the problem (unknown spec, bad M, m not dividing dim, ...).
absl::Status ValidateIndexSpec(std::string_view spec, int dimension);

absl::StatusOr<std::unique_ptr<VectorIndex>> MakeIndex(std::string_view spec, int dimension,
                                                       Metric metric);

// Inverse of VectorIndex::Serialize. DATA_LOSS for corrupt or truncated bytes.
absl::StatusOr<std::unique_ptr<VectorIndex>> DeserializeIndex(std::string_view bytes);

// Reads a file written by VectorIndex::Save, through env. NOT_FOUND "cannot
// open index file <path>"; DATA_LOSS as DeserializeIndex.
absl::StatusOr<std::unique_ptr<VectorIndex>> LoadIndex(const std::string& path,
                                                       Env* env = Env::Default());

}  // namespace neodb::index
