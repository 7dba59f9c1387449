#pragma once
// KernelFlatStorage: the flat vectors under neodb's HNSW graph, a
// faiss::IndexFlat whose distance computer is neodb's own kernel
// (index/dot_kernel.h: AVX-512, AVX2 or baseline, chosen at run time).
//
// Why: FAISS builds the graph (every HNSW insert) with the distance computer
// its storage hands out, and Debian 12's FAISS 1.7.3 is built without SIMD:
// its computer is the scalar fvec_inner_product_ref, 84% of the server's
// samples during a 100k-vector ingest (bench/peers/README.md). Queries already
// walk the graph with our kernel (index/hnsw_walk.h); this brings inserts
// onto it too, on every host and with either FAISS (tools/build_faiss.sh).
//
// Same vectors, same file format: to faiss::write_index this is an IndexFlat,
// so snapshots are unchanged, and UseKernelStorage puts a loaded index back
// on the kernel. Inner product and L2 only (the metrics neodb builds); any
// other storage is left as it is.

#include <faiss/IndexFlat.h>

namespace faiss {
struct IndexHNSWFlat;
}

namespace neodb::index {

class KernelFlatStorage : public faiss::IndexFlat {
 public:
  // REQUIRES: metric is faiss::METRIC_INNER_PRODUCT or faiss::METRIC_L2.
  KernelFlatStorage(int dim, faiss::MetricType metric);

  // Inner product (FAISS negates it for the graph) or squared L2, as
  // IndexFlat's own computer returns them.
  faiss::FlatCodesDistanceComputer* get_FlatCodesDistanceComputer() const override;
};

// Moves `index`'s vectors into a KernelFlatStorage that replaces its storage;
// the graph is untouched. A storage that is already one, or is not an
// inner-product or L2 IndexFlat owned by `index`, is left alone.
void UseKernelStorage(faiss::IndexHNSWFlat* index);

}  // namespace neodb::index
