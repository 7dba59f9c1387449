#pragma once
// Hard negatives for `neodb adapt`, mined from the collection itself: for a
// training query, the documents the collection's own searches rank high that
// are not the query's positives. Those are the mistakes the live collection
// makes today, which is what the fine-tune should unlearn.
//
// Rule (MineNegatives): walk the server's ranking (its vector leg by
// default, or with --mine-from served the collection's default hybrid
// ranking) and the keyword leg interleaved (server 1st, keyword 1st, server
// 2nd, ...), each document once, and take
// the first `count` documents that are
//   - not a positive of the query, and
//   - not a near-duplicate of any positive: the same normalised text
//     (NormalizeText), or a word-set Jaccard similarity >= jaccard_threshold
//     (words: maximal runs of ASCII letters/digits, lower-cased). A copy of the
//     positive under another id is relevant in all but name; training the
//     model to push it away would teach it noise;
//   - below the first `skip` ranks of its leg (MiningOptions::skip);
//   - with MiningOptions::max_score_ratio r > 0 and the model's scores given:
//     scoring at most r × the query's lowest-scoring positive (cosine under
//     the model being adapted; no rule for a query whose positive scores
//     at or below 0). A document the model ranks as close to the
//     query as a labelled positive is likelier an unlabelled positive than a
//     mistake (NV-Retriever's "positive-aware" mining, TopK-PercPos).

#include <cstdint>
#include <functional>
#include <vector>

#include "adapt/adapt_pairs.h"

namespace neodb::adapt {

struct MiningOptions {
  // Negatives per training query. Default: 1 (measured on SciFact, README).
  int count = 1;
  // Near-duplicate threshold on word-set Jaccard; in (0, 1]. Default: 0.9.
  double jaccard_threshold = 0.9;
  // Ranks 1..skip of each leg are passed over. The very top of a ranking that
  // is not labelled relevant is the likeliest to be relevant but unlabelled (a
  // false negative); skipping it trades hardness for fewer wrong labels.
  int skip = 0;
  // Candidates scoring above max_score_ratio × the lowest positive's score
  // are passed over; 0 = no score rule. Needs the scores (MineNegatives).
  double max_score_ratio = 0;
};

// The cosine of one query with a document (position), under the model being
// adapted: what the score rule compares.
using QueryScore = std::function<double(int64_t doc)>;

// Word-set Jaccard similarity of two texts (1 for two texts without words).
double WordJaccard(const std::string& a, const std::string& b);

// True when `candidate` is a near-duplicate of `positive` by the rule above.
bool IsNearDuplicate(const std::string& candidate, const std::string& positive,
                     double jaccard_threshold);

// Negatives (document positions) for one query, by the rule above, from the
// two ranked lists (document positions, best first; either may be empty).
// `score` is needed when options.max_score_ratio > 0 (else ignored);
// `passed_over_by_score`, when given, counts the candidates the score rule
// passed over.
std::vector<int64_t> MineNegatives(const std::vector<int64_t>& server_leg,
                                   const std::vector<int64_t>& keyword_leg,
                                   const std::vector<int64_t>& positives,
                                   const CollectionDocs& docs, const MiningOptions& options,
                                   const QueryScore& score = nullptr,
                                   int64_t* passed_over_by_score = nullptr);

}  // namespace neodb::adapt
