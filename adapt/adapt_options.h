#pragma once
// What `neodb adapt` is asked to do (its flags, tools/neodb/cmd_adapt.cc),
// and the checks on them that run before anything is read or mined.

#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "encoder/train/trainer.h"

namespace neodb::adapt {

// --warmup's default: a tenth of each round's steps.
constexpr int64_t kWarmupTenth = -1;

struct AdaptOptions {
  std::string collection;
  std::string rollback;  // --rollback C
  std::string pairs;
  std::string eval_file;
  std::string test_file;  // --test: scored and reported, never used for a decision
  double eval_split = 0.2;
  uint64_t split_seed = 1;
  std::string out;
  int negatives = 1;  // hard negatives per training pair in a step; 0 = in-batch only
  // Mined per training query; the trainer draws `negatives` of them afresh
  // each time the pair comes round (TrainerOptions::negatives_per_pair).
  // 0 = `negatives` (each pair always meets the same ones).
  int negative_pool = 0;
  int mine_depth = 20;  // documents of each leg searched for negatives
  // vector (the model alone: what the fine-tune changes) | served (the
  // collection's default ranking, hybrid). SciFact, same split and steps:
  // vector +0.035 nDCG@10 over in-batch on the vector leg, served +0.000
  // (adapt/README.md). keyword: the BM25 leg alone (DPR's negatives).
  std::string mine_from = "vector";
  int mine_skip = 0;     // top ranks of each leg passed over (MiningOptions::skip)
  double jaccard = 0.9;  // near-duplicate threshold
  // Candidates scoring above this × the query's positive (cosine under the
  // model being adapted) are passed over (MiningOptions::max_score_ratio);
  // 0 = off. On: round 1 embeds the collection in process for the scores.
  double max_score_ratio = 0;
  // The current model's vectors of the collection: embedded in process rather
  // than read from the server (its stored vectors), e.g. to check those.
  bool embed_old = false;
  // Mining rounds (ANCE-style): round 1 mines from the collection's searches
  // and trains steps/rounds; each later round mines again from the model the
  // round before trained (its own mistakes, which the first model's are not)
  // and goes on training it. The total steps stay --steps.
  int rounds = 1;
  encoder::train::TrainerOptions trainer;
  int64_t max_length = 0;
  int threads = 0;
  bool resume = false;
  bool apply = false;
  double min_gain = 0;  // apply when new hybrid nDCG@10 > old + min_gain
};

// The numbers of `options` (the trainer's own checks first), in the words of
// the flags; OK says nothing of the collection.
absl::Status CheckOptions(const AdaptOptions& options);

}  // namespace neodb::adapt
