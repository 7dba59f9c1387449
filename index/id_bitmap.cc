#include "index/id_bitmap.h"

#include <bit>

#include "common/status_macros.h"

namespace neodb::index {

IdBitmap::IdBitmap(int64_t first, int64_t last)
    : first_(first), bits_(static_cast<uint64_t>(last - first) + 1), words_((bits_ + 63) / 64) {
  NEODB_CHECK(first >= 0 && first <= last);
}

void IdBitmap::Set(int64_t id) {
  const uint64_t i = static_cast<uint64_t>(id) - static_cast<uint64_t>(first_);
  NEODB_CHECK(i < bits_);
  words_[i >> 6] |= uint64_t{1} << (i & 63);
}

size_t IdBitmap::Count() const {
  size_t n = 0;
  for (uint64_t w : words_) n += static_cast<size_t>(std::popcount(w));
  return n;
}

void IdBitmap::And(const IdBitmap& other) {
  NEODB_CHECK(first_ == other.first_ && bits_ == other.bits_);
  for (size_t i = 0; i < words_.size(); ++i) words_[i] &= other.words_[i];
}

void IdBitmap::Or(const IdBitmap& other) {
  NEODB_CHECK(first_ == other.first_ && bits_ == other.bits_);
  for (size_t i = 0; i < words_.size(); ++i) words_[i] |= other.words_[i];
}

void IdBitmap::AndNot(const IdBitmap& other) {
  NEODB_CHECK(first_ == other.first_ && bits_ == other.bits_);
  for (size_t i = 0; i < words_.size(); ++i) words_[i] &= ~other.words_[i];
}

}  // namespace neodb::index
