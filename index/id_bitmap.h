#pragma once
// IdBitmap: a set of non-negative ids held as one bit per id of a dense range
// [first, last]. A filter evaluated once per query into an IdBitmap answers
// "is this id allowed" in a few instructions, where the filter itself costs a
// metadata lookup per id: a filtered HNSW walk asks about every node it visits
// (about 10k per query at 100k vectors), and that lookup was a third of a
// filtered query's time (bench/README.md ## Hybrid search).
//
// Thread-safety: const methods may be called concurrently; Set may not race
// with anything.

#include <cstddef>
#include <cstdint>
#include <vector>

namespace neodb::index {

class IdBitmap {
 public:
  // An empty set of capacity zero (Test is false for every id).
  IdBitmap() = default;
  // An empty set that can hold the ids in [first, last].
  // REQUIRES: 0 <= first <= last.
  IdBitmap(int64_t first, int64_t last);

  // REQUIRES: first <= id <= last (of the constructor).
  void Set(int64_t id);
  // True when `id` was Set; false for any id outside [first, last].
  bool Test(int64_t id) const {
    // Unsigned: ids below `first` wrap around to a huge offset, out of range.
    const uint64_t i = static_cast<uint64_t>(id) - static_cast<uint64_t>(first_);
    return i < bits_ && ((words_[i >> 6] >> (i & 63)) & 1) != 0;
  }
  // Number of ids Set.
  size_t Count() const;
  // Set operations with a bitmap over the same range (REQUIRES: equal first
  // and last): this = this & other, this | other, this & ~other.
  void And(const IdBitmap& other);
  void Or(const IdBitmap& other);
  void AndNot(const IdBitmap& other);
  // Bytes held (the bit array).
  size_t memory_bytes() const { return words_.size() * sizeof(uint64_t); }

 private:
  int64_t first_ = 0;
  uint64_t bits_ = 0;
  std::vector<uint64_t> words_;
};

}  // namespace neodb::index
