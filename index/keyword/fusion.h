#pragma once
// Hybrid ranking: fusing a keyword leg and a vector leg into one list. Pure
// functions over each leg's ranked hits; the engine runs both legs (with the
// filter applied inside each, before its top-N), then fuses.
//
// Methods:
// * kReciprocalRank (Cormack et al. 2009): score = sum over legs of
//   1 / (rank_constant + rank), rank 1-based; a leg that did not return the
//   document adds nothing. Ignores scores, so it needs no calibration, but it
//   gives both legs equal say: a weak leg drags a strong one down.
// * kWeighted (convex combination, Weaviate's relativeScoreFusion):
//   score = alpha * norm(vector) + (1 - alpha) * norm(keyword), where norm is
//   min-max over that leg's returned list (best -> 1, worst returned -> 0; a
//   leg whose scores are all equal -> 1) and a document the leg did not return
//   gets 0 from it. Min-max rather than z-score: it keeps both legs in [0, 1]
//   whatever the score scale (BM25 grows with query length, cosine does not),
//   so alpha reads as the vector leg's share; z-scores are unbounded and depend
//   on how deep each leg was fetched.
// * kAdaptive (the default): kWeighted with alpha chosen per query from how
//   much the two legs agree (AdaptiveAlpha). Two rankers that share no errors
//   agree on relevant documents; a vector leg that shares few of the keyword
//   leg's top documents is most likely an uninformed one (a weak or
//   out-of-domain model), and gets little weight, while a good model, which
//   recovers many of BM25's top documents and reorders them, gets a weight
//   near the literature's best fixed alpha. When one leg returned nothing the
//   other is returned alone (a stop-word-only query still finds by vector).
//
// Ties, in every leg and in the fused ranking, break by ascending id, and a
// leg is cut at its depth only after that order is applied (FetchLeg,
// CutLeg): an index returns its top n with the ties at the n-th in its own
// order, which follows insertion. The ids are the caller's: the engine
// renumbers a query's candidates in the order of their document ids before it
// orders, cuts and fuses (engine/database_search.cc), and `neodb adapt`
// keys documents by their position in the server's listing, which is in
// document id order; so both break every tie by document id, and a ranking
// is a function of the collection's content, not of the order in which its
// documents were inserted (a restore, an export and import, a replica).

#include <cstdint>
#include <functional>
#include <span>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"

namespace neodb::keyword {

// A leg's hit. REQUIRES for every leg: best first, ids distinct (a repeated id
// keeps its first, best, position).
struct RankedId {
  uint64_t id = 0;
  float score = 0;
};

// Where a fused hit stood in one leg (for `explain`).
struct LegRank {
  int rank = 0;  // 1-based; 0 = the leg did not return it
  float score = 0;
};

struct FusedHit {
  uint64_t id = 0;
  double score = 0;
  LegRank keyword;
  LegRank vector;
};

enum class FusionMethod : uint8_t { kAdaptive = 0, kWeighted = 1, kReciprocalRank = 2 };

// "adaptive", "weighted", "rrf".
std::string_view FusionMethodName(FusionMethod method);
absl::StatusOr<FusionMethod> ParseFusionMethod(std::string_view name);

// A hybrid query fetches each leg this deep (or k, when larger) before
// fusing: deep enough that a document one leg ranks well and the other ranks
// at 50 still gets both contributions (the fusion README's figures were
// measured at 100), shallow enough that the keyword leg's heap and the vector
// search stay cheap. The engine serves with it, and `neodb adapt` measures with it.
inline constexpr int kHybridLegDepth = 100;

// Best first: the higher score, then the lower id (the tie rule above).
inline bool LegOrder(const RankedId& a, const RankedId& b) {
  return a.score != b.score ? a.score > b.score : a.id < b.id;
}

// No leg is fetched deeper than this (the vector indexes' largest k,
// index::kMaxK): the bound of FetchLeg's tie extension.
inline constexpr int kMaxLegFetch = 10000;

// What FetchLeg fetched: the index's best hits, best first by score, ties in
// the index's own order; more than the cut's depth when ties cross it.
struct FetchedLeg {
  std::vector<RankedId> hits;
  // The index has no hits beyond these (it returned fewer than asked).
  bool complete = false;
};

// An index's best `n` hits, best first by score (ties in any order), at most
// `n` of them. REQUIRES: 1 <= n <= kMaxLegFetch.
using LegFetch = std::function<absl::StatusOr<std::vector<RankedId>>(int n)>;

// Fetches a leg that will be cut at `depth` (CutLeg), deep enough that every
// hit tied with the depth-th is in it: fetch(depth + 1) and, while the last
// hit fetched still ties with the depth-th (the tie may go on past it), again
// four times as deep. Bound: nothing past kMaxLegFetch hits is fetched, so a
// tie that crosses the cut and runs on past the kMaxLegFetch-th hit is cut in
// the index's order. Without ties at the cut it costs one fetch of one hit
// more than the depth. fetch's error is returned as it is.
// REQUIRES: 1 <= depth <= kMaxLegFetch.
absl::StatusOr<FetchedLeg> FetchLeg(const LegFetch& fetch, int depth);

// The leg's hits ordered by LegOrder, the first `depth` kept.
std::vector<RankedId> CutLeg(std::vector<RankedId> hits, int depth);

inline constexpr int kDefaultRrfK = 60;
inline constexpr int kDefaultAgreementDepth = 10;

struct FusionOptions {
  // Default: kAdaptive.
  FusionMethod method = FusionMethod::kAdaptive;
  // kWeighted: the vector leg's share, in [0, 1] (0 = keyword only). Default 0.5.
  double alpha = 0.5;
  // kReciprocalRank: the rank constant. Default 60.
  int rrf_k = kDefaultRrfK;
  // kAdaptive: how many of each leg's top hits are compared. Default 10.
  int agreement_depth = kDefaultAgreementDepth;
  // kAdaptive: the alpha given to legs that agree completely. Default 0.5.
  double max_alpha = 0.5;
};

struct FusionResult {
  std::vector<FusedHit> hits;  // best first, at most k
  double alpha = 0;            // the vector share used (kWeighted, kAdaptive)
};

// The fraction of the top `depth` hits the two legs share:
// |top_d(keyword) ∩ top_d(vector)| / d with d = min(depth, sizes); 0 if a
// leg is empty.
double LegAgreement(std::span<const RankedId> keyword, std::span<const RankedId> vector, int depth);

// kAdaptive's alpha: max_alpha * LegAgreement(keyword, vector, depth).
double AdaptiveAlpha(std::span<const RankedId> keyword, std::span<const RankedId> vector,
                     const FusionOptions& options);

std::vector<FusedHit> FuseReciprocalRank(std::span<const RankedId> keyword,
                                         std::span<const RankedId> vector, int k, int rrf_k);
std::vector<FusedHit> FuseWeighted(std::span<const RankedId> keyword,
                                   std::span<const RankedId> vector, double alpha, int k);

// Fuses by options.method into the best k. INVALID_ARGUMENT for k < 1, alpha
// or max_alpha outside [0, 1], rrf_k < 0 or agreement_depth < 1.
absl::StatusOr<FusionResult> Fuse(std::span<const RankedId> keyword,
                                  std::span<const RankedId> vector, int k,
                                  const FusionOptions& options);

}  // namespace neodb::keyword
