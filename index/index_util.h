#pragma once
// Internal to index/: argument checks shared by every VectorIndex, the FAISS
// exception adapter; the byte reader/writer for Serialize is common/byte_codec.h.

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <exception>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <unordered_map>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "common/byte_codec.h"
#include "index/metric.h"
#include "index/vector_index.h"

namespace neodb::index {

inline constexpr int kMaxK = 10000;
inline constexpr char kIndexMagic[] = "NDBVIDX1";  // 8 bytes, no NUL written

// INVALID_ARGUMENT unless vectors.size() == ids.size() * dim, ids are
// non-negative and distinct within the call, and every value is finite.
absl::Status ValidateAddArgs(std::span<const int64_t> ids, std::span<const float> vectors, int dim);
// INVALID_ARGUMENT unless 1 <= k <= kMaxK and queries.size() is a multiple of dim.
absl::Status ValidateSearchArgs(std::span<const float> queries, int k, int dim);
// The queries of a search as an index compares them with its vectors: checked
// (ValidateSearchArgs), copied, and normalised to unit length for kCosine.
absl::StatusOr<std::vector<float>> SearchQueries(std::span<const float> queries, int k, int dim,
                                                 Metric metric);
// INVALID_ARGUMENT unless `out` holds `dim` floats (VectorIndex::Reconstruct).
absl::Status ValidateReconstructArgs(std::span<const float> out, int dim);
// NOT_FOUND naming `id`: Reconstruct of an id the index does not hold.
absl::Status IdNotInIndex(int64_t id);

// The ids held by `ids`, ascending (VectorIndex::Ids). `ids` is a container of
// int64_t ids, or a map keyed by id.
template <typename Container>
std::vector<int64_t> SortedIds(const Container& ids) {
  std::vector<int64_t> out;
  out.reserve(ids.size());
  for (const auto& e : ids) {
    if constexpr (std::is_same_v<std::decay_t<decltype(e)>, int64_t>) {
      out.push_back(e);
    } else {
      out.push_back(e.first);
    }
  }
  std::sort(out.begin(), out.end());
  return out;
}

// The rows (through `row_of`: id -> row) of `filter`'s Candidates() that it
// allows, ascending: what an index scores alone when a filter lists its
// candidates (a tenant's documents). Ids `row_of` lacks are skipped.
// REQUIRES: filter.Candidates() is not null.
std::vector<size_t> AllowedCandidateRows(const IdFilter& filter,
                                         const std::unordered_map<int64_t, size_t>& row_of);

// Runs `fn`, turning any exception (FAISS throws faiss::FaissException, the
// standard library std::bad_alloc) into INTERNAL / RESOURCE_EXHAUSTED.
template <typename Fn>
absl::Status CatchExceptions(std::string_view what, Fn&& fn) {
  try {
    fn();
    return absl::OkStatus();
  } catch (const std::bad_alloc&) {
    return absl::ResourceExhaustedError(std::string(what) + ": out of memory");
  } catch (const std::exception& e) {
    return absl::InternalError(std::string(what) + ": " + e.what());
  } catch (...) {
    return absl::InternalError(std::string(what) + ": unknown exception");
  }
}

// ByteWriter / ByteReader: common/byte_codec.h (neodb::, found from here).

// Header shared by every serialised index: magic, spec, dimension, metric.
void WriteIndexHeader(ByteWriter* w, std::string_view spec, int dim, Metric metric);

}  // namespace neodb::index
