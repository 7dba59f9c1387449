#pragma once
// VectorIndex: a derived, rebuildable nearest-neighbour index over vectors keyed
// by stable 64-bit internal ids (db::Document::internal_id). Implementations:
// exact BLAS search ("Flat"), FAISS HNSW ("HNSW<M>") and FAISS IVF-PQ
// ("IVF<n>,PQ<m>"); create them with MakeIndex (index/index_factory.h).
//
// Thread-safety: all methods are safe to call concurrently. Search, size and
// Serialize take a shared lock; Add and Remove take an exclusive one, so a
// search sees either all or none of an Add.

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "index/id_bitmap.h"
#include "index/metric.h"

namespace neodb::index {

// Restricts a search to allowed ids. Called during the search (inside FAISS via
// an IDSelector), possibly from several threads at once: implementations must
// be thread-safe and fast (a hash lookup, not I/O).
class IdFilter {
 public:
  virtual ~IdFilter() = default;
  virtual bool Allowed(int64_t id) const = 0;
  // The allowed ids as a bitmap (Test(id) == Allowed(id) for every id), or
  // nullptr when the filter has none. An index calls it before a search that
  // asks about a large share of its ids (an HNSW graph walk, an IVF list scan,
  // listing the allowed ids), never for one that asks about a few (an exact
  // scan asks only about rows that would enter the top k): a filter may build
  // the bitmap on the first call, at a cost of one evaluation per id it knows.
  // Thread-safe; the bitmap lives as long as the filter. Default: nullptr.
  virtual const IdBitmap* Dense() const { return nullptr; }
  // A short list that holds every allowed id, ascending (it may hold others:
  // Allowed decides), or nullptr when the filter has none: a tenant's
  // documents (engine/tenant_scope.h). An index that can reach a row by id
  // scores just these instead of walking or scanning everything, so a
  // tenant's query costs what its own documents cost. Thread-safe; the list
  // lives as long as the filter. Default: nullptr.
  virtual const std::vector<int64_t>* Candidates() const { return nullptr; }
};

// An IdFilter over a bitmap it owns.
class IdBitmapFilter final : public IdFilter {
 public:
  explicit IdBitmapFilter(IdBitmap bitmap) : bitmap_(std::move(bitmap)) {}
  bool Allowed(int64_t id) const override { return bitmap_.Test(id); }
  const IdBitmap* Dense() const override { return &bitmap_; }

 private:
  IdBitmap bitmap_;
};

struct SearchHit {
  int64_t id = 0;
  // Higher is better (see index/metric.h).
  float score = 0;
};

struct SearchOptions {
  // HNSW: beam width (raised to at least k). 0 = the index default (64).
  int ef_search = 0;
  // IVF: lists probed. 0 = the index default (max(1, nlist / 16)).
  int nprobe = 0;
};

class VectorIndex {
 public:
  virtual ~VectorIndex() = default;

  // Adds `ids.size()` vectors stored row-major in `vectors`.
  // INVALID_ARGUMENT when vectors.size() != ids.size() * dimension(), an id is
  // negative, repeated, or a value is not finite; ALREADY_EXISTS when an id is
  // present. On error nothing is added.
  virtual absl::Status Add(std::span<const int64_t> ids, std::span<const float> vectors) = 0;
  // Removes ids; absent ids are ignored. Returns how many were removed.
  virtual absl::StatusOr<size_t> Remove(std::span<const int64_t> ids) = 0;
  // k nearest neighbours for each of the `queries.size() / dimension()` queries,
  // best first. With `filter`, only allowed ids are returned, and a query returns
  // min(k, number of allowed live ids) hits (the filter is applied during the
  // search; selective filters fall back to an exact scan of the allowed ids).
  // Removed ids are never returned. INVALID_ARGUMENT for k < 1 or k > 10000 or a
  // query size that is not a multiple of dimension().
  absl::StatusOr<std::vector<std::vector<SearchHit>>> Search(
      std::span<const float> queries, int k, const IdFilter* filter = nullptr,
      const SearchOptions& options = {}) const {
    return SearchImpl(queries, k, filter, options);
  }

  // Live (searchable) vectors.
  virtual size_t size() const = 0;
  virtual bool Contains(int64_t id) const = 0;
  // Every live id, ascending.
  virtual std::vector<int64_t> Ids() const = 0;
  virtual int dimension() const = 0;
  // Copies the vector the index holds for live `id` into `out` (dimension()
  // floats, as stored: normalised for cosine), so that Verify can compare it
  // with the stored document. NOT_FOUND when `id` is not live;
  // INVALID_ARGUMENT when out.size() != dimension(); UNIMPLEMENTED when the
  // index keeps only a lossy code of the vector (IVF-PQ once trained), which
  // cannot give it back.
  virtual absl::Status Reconstruct(int64_t id, std::span<float> out) const = 0;
  // The canonical factory string, e.g. "HNSW32".
  virtual std::string spec() const = 0;
  virtual Metric metric() const = 0;
  // True when removed-but-still-stored entries (HNSW tombstones) exceed 20% of
  // the stored ones: the owner should rebuild the index from the store.
  virtual bool NeedsRebuild() const { return false; }
  // Short human description of internal state (e.g. "IVF untrained, 120 buffered").
  virtual std::string DebugString() const = 0;

  // Self-describing bytes (header with spec, dimension, metric) that
  // DeserializeIndex (index/index_factory.h) turns back into an equal index.
  virtual absl::StatusOr<std::string> Serialize() const = 0;

  // Convenience: Serialize to `path`, atomically (common/atomic_file.h);
  // snapshots go through index/snapshot.h, which also checksums and versions.
  absl::Status Save(const std::string& path) const;

 protected:
  // Search without default arguments (defaults on virtual functions are
  // resolved statically, so they live on the non-virtual Search above).
  virtual absl::StatusOr<std::vector<std::vector<SearchHit>>> SearchImpl(
      std::span<const float> queries, int k, const IdFilter* filter,
      const SearchOptions& options) const = 0;
};

}  // namespace neodb::index
