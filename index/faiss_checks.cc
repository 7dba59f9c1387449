#include "index/faiss_checks.h"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"

namespace neodb::index {
namespace {

// Bounds-checked reads of FAISS's little-endian fields.
class Reader {
 public:
  explicit Reader(std::string_view in) : in_(in) {}

  template <typename T>
  bool Read(T* v) {
    if (in_.size() < sizeof(T)) return false;
    std::memcpy(v, in_.data(), sizeof(T));
    in_.remove_prefix(sizeof(T));
    return true;
  }
  // READVECTOR: a uint64 count, then count elements. False when the count
  // exceeds what is left, before anything is allocated.
  template <typename T>
  bool Vector(std::vector<T>* v, uint64_t element_bytes = sizeof(T)) {
    uint64_t n;
    if (!Read(&n) || n > in_.size() / element_bytes) return false;
    v->resize(n);
    if (n > 0) std::memcpy(v->data(), in_.data(), n * element_bytes);
    in_.remove_prefix(n * element_bytes);
    return true;
  }
  // As Vector, without keeping the elements.
  bool SkipVector(uint64_t element_bytes, uint64_t* count) {
    return Read(count) && *count <= in_.size() / element_bytes &&
           Skip(*count * element_bytes);
  }
  bool Skip(size_t n) {
    if (in_.size() < n) return false;
    in_.remove_prefix(n);
    return true;
  }
  bool done() const { return in_.empty(); }

 private:
  std::string_view in_;
};

struct Header {
  int32_t d = 0;
  int64_t ntotal = 0;
};

// The 4-character type tag that starts every FAISS index ("" if truncated).
std::string_view Fourcc(Reader* r, char (&c)[4]) { return r->Read(&c) ? std::string_view(c, 4) : ""; }

// read_index_header: d, ntotal, two unused idx_t, is_trained, metric_type
// (and metric_arg for metrics we never write). is_trained and metric_type are
// read into a bool and an enum: any value but 0/1 and our two metrics, inner
// product (0) and L2 (1), is undefined behaviour or not ours.
bool ReadHeader(Reader* r, Header* h) {
  uint8_t is_trained;
  int32_t metric;
  return r->Read(&h->d) && r->Read(&h->ntotal) && r->Skip(8 + 8) && r->Read(&is_trained) &&
         is_trained <= 1 && r->Read(&metric) && (metric == 0 || metric == 1);
}

absl::Status Bad(std::string_view what) {
  return absl::DataLossError(absl::StrCat("hnsw index payload: ", std::string(what)));
}

absl::Status BadIvf(std::string_view what) {
  return absl::DataLossError(absl::StrCat("ivfpq index payload: ", std::string(what)));
}

// A flat index (L2 or inner product) of dimension d holding `count` vectors.
bool FlatIndexIs(Reader* r, int32_t d, uint64_t count) {
  char tag[4];
  const std::string_view type = Fourcc(r, tag);
  Header h;
  uint64_t floats;
  return (type == "IxF2" || type == "IxFI") && ReadHeader(r, &h) &&
         r->SkipVector(sizeof(float), &floats) && h.d == d && h.ntotal >= 0 &&
         static_cast<uint64_t>(h.ntotal) == count && floats == count * static_cast<uint64_t>(d);
}

}  // namespace

absl::Status CheckFaissHnswFlat(std::string_view bytes) {
  Reader r(bytes);
  Header h;
  char tag[4];
  if (Fourcc(&r, tag) != "IHNf") return Bad("not a FAISS IndexHNSWFlat");
  if (!ReadHeader(&r, &h)) return Bad("truncated FAISS header");
  if (h.d < 1 || h.ntotal < 0) return Bad("bad FAISS dimension or count");
  const uint64_t n = static_cast<uint64_t>(h.ntotal);
  std::vector<double> assign_probas;
  std::vector<int32_t> cum, levels, neighbors;
  std::vector<uint64_t> offsets;
  int32_t entry_point, max_level, ef_construction, ef_search, upper_beam;
  if (!r.Vector(&assign_probas) || !r.Vector(&cum) || !r.Vector(&levels) ||
      !r.Vector(&offsets) || !r.Vector(&neighbors) || !r.Read(&entry_point) ||
      !r.Read(&max_level) || !r.Read(&ef_construction) || !r.Read(&ef_search) ||
      !r.Read(&upper_beam)) {
    return Bad("HNSW graph truncated or a length exceeds the bytes left");
  }
  // The level table: adding a vector draws a level below assign_probas.size()
  // and looks up its neighbour count in cum.
  if (assign_probas.empty() || cum.size() != assign_probas.size() + 1 || cum[0] != 0) {
    return Bad("inconsistent HNSW level tables");
  }
  for (size_t i = 1; i < cum.size(); ++i) {
    if (cum[i] < cum[i - 1]) return Bad("inconsistent HNSW level tables");
  }
  if (levels.size() != n || offsets.size() != n + 1 || offsets[0] != 0 ||
      offsets[n] != neighbors.size()) {
    return Bad("HNSW node tables do not match the vector count");
  }
  int32_t top = 0;
  for (uint64_t i = 0; i < n; ++i) {
    const int32_t l = levels[i];
    if (l < 1 || static_cast<size_t>(l) >= cum.size() ||
        offsets[i + 1] < offsets[i] ||
        offsets[i + 1] - offsets[i] != static_cast<uint64_t>(cum[l])) {
      return Bad(absl::StrCat("HNSW node ", i, " has an inconsistent level or neighbour list"));
    }
    top = std::max(top, l);
  }
  for (int32_t v : neighbors) {
    if (v < -1 || v >= h.ntotal) return Bad("HNSW neighbour id out of range");
  }
  if (n == 0 ? (entry_point != -1 || max_level != -1)
             : (entry_point < 0 || entry_point >= h.ntotal || max_level != top - 1)) {
    return Bad("bad HNSW entry point or top level");
  }
  if (ef_construction < 1 || ef_search < 1 || upper_beam < 1) {
    return Bad("bad HNSW search parameters");
  }
  // The storage: a flat index (L2 or inner product) of the same shape holding
  // ntotal * d floats (READXBVECTOR: a count of floats, then the floats).
  const std::string_view storage = Fourcc(&r, tag);
  if (storage != "IxF2" && storage != "IxFI") return Bad("HNSW storage is not a flat index");
  Header s;
  uint64_t floats;
  if (!ReadHeader(&r, &s) || !r.SkipVector(sizeof(float), &floats)) {
    return Bad("HNSW storage truncated or a length exceeds the bytes left");
  }
  if (s.d != h.d || s.ntotal != h.ntotal || floats != n * static_cast<uint64_t>(h.d)) {
    return Bad("HNSW storage does not match the graph");
  }
  if (!r.done()) return Bad("trailing bytes after the FAISS index");
  return absl::OkStatus();
}

absl::Status CheckFaissIvfPq(std::string_view bytes, int dim, size_t nlist, size_t m) {
  Reader r(bytes);
  Header h;
  char tag[4];
  if (Fourcc(&r, tag) != "IwPQ") return BadIvf("not a FAISS IndexIVFPQ");
  uint64_t lists, nprobe;
  if (!ReadHeader(&r, &h) || !r.Read(&lists) || !r.Read(&nprobe)) {
    return BadIvf("truncated FAISS header");
  }
  if (h.d != dim || h.ntotal < 0 || lists != nlist) return BadIvf("FAISS header does not match");
  // The coarse quantizer: search assigns queries to its centroids' lists.
  if (!FlatIndexIs(&r, dim, nlist)) return BadIvf("coarse quantizer is not nlist flat centroids");
  // Direct map: we never keep one.
  uint8_t map_type;
  uint64_t map_entries;
  if (!r.Read(&map_type) || !r.SkipVector(8, &map_entries) || map_type != 0 || map_entries != 0) {
    return BadIvf("unexpected direct map");
  }
  // by_residual, code_size, then the product quantizer: d, M, nbits, centroids.
  uint8_t by_residual;
  uint64_t code_size, pq_d, pq_m, pq_nbits, centroids;
  if (!r.Read(&by_residual) || !r.Read(&code_size) || !r.Read(&pq_d) || !r.Read(&pq_m) ||
      !r.Read(&pq_nbits) || !r.SkipVector(sizeof(float), &centroids)) {
    return BadIvf("product quantizer truncated or a length exceeds the bytes left");
  }
  if (by_residual > 1 || code_size != m || pq_d != static_cast<uint64_t>(dim) || pq_m != m ||
      pq_nbits != 8 || centroids != pq_d * 256) {
    return BadIvf("product quantizer does not match the index");
  }
  // Array inverted lists: nlist, code size, the list sizes ("full": one per
  // list; "sprs": (list, size) pairs), then each list's codes and ids.
  uint64_t il_lists, il_code_size;
  if (Fourcc(&r, tag) != "ilar" || !r.Read(&il_lists) || !r.Read(&il_code_size) ||
      il_lists != nlist || il_code_size != m) {
    return BadIvf("inverted lists do not match the index");
  }
  const std::string_view list_type = Fourcc(&r, tag);
  std::vector<uint64_t> sizes;
  if (!r.Vector(&sizes)) return BadIvf("inverted list sizes truncated");
  std::vector<uint64_t> per_list(nlist, 0);
  if (list_type == "full") {
    if (sizes.size() != nlist) return BadIvf("inverted list sizes do not match nlist");
    per_list = sizes;
  } else if (list_type == "sprs") {
    if (sizes.size() % 2 != 0) return BadIvf("odd sparse inverted list sizes");
    for (size_t i = 0; i < sizes.size(); i += 2) {
      if (sizes[i] >= nlist) return BadIvf("inverted list number out of range");
      per_list[sizes[i]] = sizes[i + 1];
    }
  } else {
    return BadIvf("unknown inverted list layout");
  }
  uint64_t total = 0;
  for (uint64_t n : per_list) {
    // Each entry is m bytes of code and an 8-byte id; n is bounded by the
    // input's length before it is multiplied.
    if (n > bytes.size() / (m + 8) || !r.Skip(n * (m + 8))) {
      return BadIvf("inverted lists truncated or a size exceeds the bytes left");
    }
    total += n;
  }
  if (total != static_cast<uint64_t>(h.ntotal)) return BadIvf("inverted lists do not hold ntotal");
  if (!r.done()) return BadIvf("trailing bytes after the FAISS index");
  return absl::OkStatus();
}

}  // namespace neodb::index
