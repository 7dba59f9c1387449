#include "index/keyword/fusion.h"

#include <algorithm>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "common/status_macros.h"

namespace neodb::keyword {
namespace {

// Collects both legs' ranks per id (first occurrence wins), in first-seen order.
std::vector<FusedHit> Union(std::span<const RankedId> keyword, std::span<const RankedId> vector) {
  std::vector<FusedHit> hits;
  absl::flat_hash_map<uint64_t, size_t> at;
  hits.reserve(keyword.size() + vector.size());
  auto add = [&](std::span<const RankedId> leg, LegRank FusedHit::*which) {
    for (size_t i = 0; i < leg.size(); ++i) {
      auto [it, inserted] = at.try_emplace(leg[i].id, hits.size());
      if (inserted) hits.push_back(FusedHit{leg[i].id, 0, {}, {}});
      LegRank& r = hits[it->second].*which;
      if (r.rank == 0) r = LegRank{static_cast<int>(i) + 1, leg[i].score};
    }
  };
  add(keyword, &FusedHit::keyword);
  add(vector, &FusedHit::vector);
  return hits;
}

std::vector<FusedHit> TopK(std::vector<FusedHit> hits, int k) {
  auto better = [](const FusedHit& a, const FusedHit& b) {
    return a.score != b.score ? a.score > b.score : a.id < b.id;
  };
  const size_t n = std::min(hits.size(), static_cast<size_t>(std::max(k, 0)));
  std::partial_sort(hits.begin(), hits.begin() + n, hits.end(), better);
  hits.resize(n);
  return hits;
}

// Min-max bounds of a leg's scores.
struct Bounds {
  float lo = 0, hi = 0;
};
Bounds ScoreBounds(std::span<const RankedId> leg) {
  Bounds b;
  if (leg.empty()) return b;
  b.lo = b.hi = leg[0].score;
  for (const RankedId& h : leg) {
    b.lo = std::min(b.lo, h.score);
    b.hi = std::max(b.hi, h.score);
  }
  return b;
}

double Normalized(const LegRank& r, Bounds b) {
  if (r.rank == 0) return 0;
  if (b.hi <= b.lo) return 1;
  return (static_cast<double>(r.score) - b.lo) / (static_cast<double>(b.hi) - b.lo);
}

}  // namespace

std::string_view FusionMethodName(FusionMethod method) {
  switch (method) {
    case FusionMethod::kAdaptive:
      return "adaptive";
    case FusionMethod::kWeighted:
      return "weighted";
    case FusionMethod::kReciprocalRank:
      return "rrf";
  }
  return "unknown";
}

absl::StatusOr<FusionMethod> ParseFusionMethod(std::string_view name) {
  for (FusionMethod m :
       {FusionMethod::kAdaptive, FusionMethod::kWeighted, FusionMethod::kReciprocalRank}) {
    if (name == FusionMethodName(m)) return m;
  }
  return absl::InvalidArgumentError(absl::StrCat("unknown fusion \"", std::string(name),
                                                 "\" (expected adaptive, weighted or rrf)"));
}

double LegAgreement(std::span<const RankedId> keyword, std::span<const RankedId> vector,
                    int depth) {
  const size_t d =
      std::min({static_cast<size_t>(std::max(depth, 0)), keyword.size(), vector.size()});
  if (d == 0) return 0;
  absl::flat_hash_set<uint64_t> top;
  for (size_t i = 0; i < d; ++i) top.insert(keyword[i].id);
  size_t shared = 0;
  for (size_t i = 0; i < d; ++i) shared += top.erase(vector[i].id);
  return static_cast<double>(shared) / static_cast<double>(d);
}

double AdaptiveAlpha(std::span<const RankedId> keyword, std::span<const RankedId> vector,
                     const FusionOptions& options) {
  return options.max_alpha * LegAgreement(keyword, vector, options.agreement_depth);
}

std::vector<FusedHit> FuseReciprocalRank(std::span<const RankedId> keyword,
                                         std::span<const RankedId> vector, int k, int rrf_k) {
  std::vector<FusedHit> hits = Union(keyword, vector);
  for (FusedHit& h : hits) {
    for (const LegRank& r : {h.keyword, h.vector}) {
      if (r.rank > 0) h.score += 1.0 / (static_cast<double>(rrf_k) + r.rank);
    }
  }
  return TopK(std::move(hits), k);
}

std::vector<FusedHit> FuseWeighted(std::span<const RankedId> keyword,
                                   std::span<const RankedId> vector, double alpha, int k) {
  const Bounds kb = ScoreBounds(keyword);
  const Bounds vb = ScoreBounds(vector);
  std::vector<FusedHit> hits = Union(keyword, vector);
  for (FusedHit& h : hits) {
    h.score = alpha * Normalized(h.vector, vb) + (1 - alpha) * Normalized(h.keyword, kb);
  }
  return TopK(std::move(hits), k);
}

absl::StatusOr<FetchedLeg> FetchLeg(const LegFetch& fetch, int depth) {
  FetchedLeg leg;
  int n = std::min(depth + 1, kMaxLegFetch);
  while (true) {
    ASSIGN_OR_RETURN(leg.hits, fetch(n));
    leg.complete = leg.hits.size() < static_cast<size_t>(n);
    // Done when the index ran out, the cut is not reached, or the last hit
    // fetched scores below the depth-th (so no hit past it ties with that).
    if (leg.complete || leg.hits.size() <= static_cast<size_t>(depth) ||
        leg.hits.back().score != leg.hits[static_cast<size_t>(depth) - 1].score ||
        n == kMaxLegFetch) {
      return leg;
    }
    n = static_cast<int>(std::min<int64_t>(int64_t{n} * 4, kMaxLegFetch));
  }
}

std::vector<RankedId> CutLeg(std::vector<RankedId> hits, int depth) {
  const size_t n = std::min(hits.size(), static_cast<size_t>(std::max(depth, 0)));
  std::partial_sort(hits.begin(), hits.begin() + static_cast<std::ptrdiff_t>(n), hits.end(),
                    LegOrder);
  hits.resize(n);
  return hits;
}

absl::StatusOr<FusionResult> Fuse(std::span<const RankedId> keyword,
                                  std::span<const RankedId> vector, int k,
                                  const FusionOptions& options) {
  if (k < 1) return absl::InvalidArgumentError(absl::StrCat("k must be >= 1, got ", k));
  if (!(options.alpha >= 0 && options.alpha <= 1)) {
    return absl::InvalidArgumentError(absl::StrCat("alpha must be in [0, 1], got ", options.alpha));
  }
  if (!(options.max_alpha >= 0 && options.max_alpha <= 1)) {
    return absl::InvalidArgumentError(
        absl::StrCat("max_alpha must be in [0, 1], got ", options.max_alpha));
  }
  if (options.rrf_k < 0) return absl::InvalidArgumentError("rrf_k must be >= 0");
  if (options.agreement_depth < 1)
    return absl::InvalidArgumentError("agreement_depth must be >= 1");
  FusionResult result;
  switch (options.method) {
    case FusionMethod::kReciprocalRank:
      result.hits = FuseReciprocalRank(keyword, vector, k, options.rrf_k);
      return result;
    case FusionMethod::kWeighted:
      result.alpha = options.alpha;
      break;
    case FusionMethod::kAdaptive:
      // One leg empty: the other alone (alpha 0 or 1), not a blend with nothing.
      if (keyword.empty() || vector.empty()) {
        result.alpha = keyword.empty() ? 1.0 : 0.0;
      } else {
        result.alpha = AdaptiveAlpha(keyword, vector, options);
      }
      break;
  }
  result.hits = FuseWeighted(keyword, vector, result.alpha, k);
  return result;
}

}  // namespace neodb::keyword
