#include "adapt/adapt_options.h"

#include "common/status_macros.h"

namespace neodb::adapt {

absl::Status CheckOptions(const AdaptOptions& a) {
  if (a.negatives < 0) return absl::InvalidArgumentError("--negatives must be >= 0");
  // The trainer's own checks, before anything is read or mined.
  RETURN_IF_ERROR(encoder::train::CheckTrainerNumbers(a.trainer));
  if (a.trainer.warmup < 0 && a.trainer.warmup != kWarmupTenth)
    return absl::InvalidArgumentError("--warmup must be >= 0");
  if (a.negative_pool < 0) return absl::InvalidArgumentError("--negative-pool must be >= 0");
  if (a.rounds < 1 || a.rounds > 10)
    return absl::InvalidArgumentError("--rounds must be in [1, 10]");
  if (a.rounds > 1 && a.negatives == 0) {
    return absl::InvalidArgumentError(
        "--rounds > 1 mines again each round: it needs --negatives >= 1");
  }
  if (a.rounds > a.trainer.steps) {
    return absl::InvalidArgumentError("--rounds must not exceed --steps");
  }
  if (a.negative_pool > 0 && a.negatives == 0) {
    return absl::InvalidArgumentError("--negative-pool needs --negatives >= 1 drawn from it");
  }
  if (a.mine_depth < 1 || a.mine_depth > 1000) {
    return absl::InvalidArgumentError("--mine-depth must be in [1, 1000]");
  }
  if (a.mine_from != "served" && a.mine_from != "vector" && a.mine_from != "keyword") {
    return absl::InvalidArgumentError("--mine-from must be served, vector or keyword");
  }
  if (!(a.max_score_ratio >= 0 && a.max_score_ratio <= 10)) {
    return absl::InvalidArgumentError("--mine-max-score-ratio must be in [0, 10] (0 = off)");
  }
  if (a.mine_skip < 0 || a.mine_skip >= a.mine_depth) {
    return absl::InvalidArgumentError("--mine-skip must be in [0, --mine-depth)");
  }
  if (!(a.jaccard > 0 && a.jaccard <= 1)) {
    return absl::InvalidArgumentError("--near-duplicate-jaccard must be in (0, 1]");
  }
  return absl::OkStatus();
}

}  // namespace neodb::adapt
