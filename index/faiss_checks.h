#pragma once
// Internal to index/: checks the FAISS bytes of our two FAISS index types (as
// faiss::write_index writes them, FAISS 1.7.x) before faiss::read_index sees
// them. FAISS trusts its input: a length field makes it allocate up to 2^40
// elements before reading a byte, and a neighbour id out of range makes a
// later search read outside the vectors. Snapshots are checksummed, so only a
// crafted file gets here, but a crafted file must not take the server down.

#include <cstddef>
#include <string_view>

#include "absl/status/status.h"

namespace neodb::index {

// OK when `bytes` is an IndexHNSWFlat (L2 or inner-product storage) whose
// every length fits in the bytes that follow it, whose graph is consistent
// (levels, offsets, neighbour ids below ntotal, entry point) and which ends
// exactly at the end of `bytes`. DATA_LOSS naming the problem otherwise.
absl::Status CheckFaissHnswFlat(std::string_view bytes);

// OK when `bytes` is an IndexIVFPQ of dimension `dim` with `nlist` lists and
// `m` 8-bit sub-quantizers (code size m), a flat coarse quantizer holding
// exactly nlist centroids, no direct map, array inverted lists whose sizes
// fit in the bytes that follow and add up to ntotal, ending exactly at the
// end of `bytes`. DATA_LOSS naming the problem otherwise.
absl::Status CheckFaissIvfPq(std::string_view bytes, int dim, size_t nlist, size_t m);

}  // namespace neodb::index
