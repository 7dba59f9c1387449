#pragma once
// In-batch false negatives. InfoNCE treats every other candidate of a batch as
// a negative of query i, but two kinds of candidate are positives of it:
//  - the same document as its positive, when several queries share one
//    (SciFact's 919 training pairs hold 522 pairs of pairs with the same
//    document, and 159 with the same query);
//  - a positive of the same query in another pair, when a query has several
//    relevant documents.
// Pushing a query away from them teaches the opposite of its labels, and once
// the easy negatives are separated it is most of what is left of the loss.
// KnownPositives marks them so that InfoNce leaves them out. Texts are compared
// as token sequences (what the model sees), through a 64-bit hash.

#include <cstdint>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "encoder/train/grad_cache.h"
#include "encoder/train/pairs.h"

namespace neodb::encoder::train {

class KnownPositives {
 public:
  // Every (query, positive) of the training pairs; negatives are not positives.
  explicit KnownPositives(const std::vector<TokenizedPair>& pairs);

  // The [B, B+M] mask of ContrastiveBatch::excluded for `batch`: (i, j) is set
  // when candidate j ≠ i is a positive of query i. Empty when nothing is.
  std::vector<uint8_t> Excluded(const ContrastiveBatch& batch) const;

 private:
  // Query hash → the hashes of all its positives.
  std::unordered_map<uint64_t, std::unordered_set<uint64_t>> positives_of_;
};

}  // namespace neodb::encoder::train
