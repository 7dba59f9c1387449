#include "encoder/train/known_positives.h"

#include "xxhash.h"

namespace neodb::encoder::train {
namespace {

uint64_t TokenHash(const std::vector<int32_t>& ids) {
  return XXH3_64bits(ids.data(), ids.size() * sizeof(int32_t));
}

}  // namespace

KnownPositives::KnownPositives(const std::vector<TokenizedPair>& pairs) {
  for (const TokenizedPair& p : pairs)
    positives_of_[TokenHash(p.query)].insert(TokenHash(p.positive));
}

std::vector<uint8_t> KnownPositives::Excluded(const ContrastiveBatch& batch) const {
  const int64_t b = static_cast<int64_t>(batch.queries.size());
  const int64_t num_cand = batch.num_texts() - b;
  std::vector<uint64_t> cand(static_cast<size_t>(num_cand));
  for (int64_t j = 0; j < num_cand; ++j) cand[j] = TokenHash(batch.text(b + j));
  std::vector<uint8_t> excluded(static_cast<size_t>(b * num_cand), 0);
  bool any = false;
  for (int64_t i = 0; i < b; ++i) {
    const auto it = positives_of_.find(TokenHash(batch.queries[i]));
    // A query the pairs do not know (a hand-built batch) has only its own positive.
    std::unordered_set<uint64_t> own;
    const std::unordered_set<uint64_t>* positives = &own;
    if (it != positives_of_.end()) {
      positives = &it->second;
    } else {
      own.insert(cand[i]);
    }
    for (int64_t j = 0; j < num_cand; ++j) {
      if (j != i && positives->count(cand[j]) > 0) {
        excluded[i * num_cand + j] = 1;
        any = true;
      }
    }
  }
  if (!any) excluded.clear();
  return excluded;
}

}  // namespace neodb::encoder::train
