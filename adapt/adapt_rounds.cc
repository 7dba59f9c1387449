// AdaptJob's rounds (stages 2-3): mine the training file, then fine-tune
// the model on it; with --rounds N, N times.
#include <algorithm>
#include <cstdio>
#include <optional>
#include <utility>

#include "absl/strings/str_cat.h"
#include "adapt/adapt_job.h"
#include "adapt/adapt_report.h"
#include "adapt/job_io.h"
#include "adapt/training_file.h"
#include "common/env.h"
#include "common/status_macros.h"
#include "encoder/train/finetune.h"

namespace neodb::adapt {
namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;

}  // namespace

// --- 2-3. mine, then fine-tune -----------------------------------------------

// With --rounds N, N times, each round mining again from the model the round
// before trained (an intermediate model lives in <out>.adapt/roundK) and
// training it further. A resumed run reuses each finished round and each
// mined file.
absl::Status AdaptJob::MineAndTrain() {
  RETURN_IF_ERROR(Env::Default()->CreateDir(side_.string()));
  base_dir_ = facts_.model_dir;
  SaveServerVectors();
  std::error_code ec;
  for (int r = 1; r <= a_.rounds && !trained_; ++r) {
    const Round round = RoundAt(r);
    if (!round.last && fs::exists(round.out / "lineage.json", ec)) {
      ASSIGN_OR_RETURN(json m, ReadJsonFile(round.mining_file));
      mining_.push_back(m);
      base_dir_ = round.out.string();
      std::fprintf(stderr, "resuming: round %d's model is in %s\n", r, base_dir_.c_str());
      continue;
    }
    RETURN_IF_ERROR(Mine(round));
    RETURN_IF_ERROR(Train(round));
  }
  ASSIGN_OR_RETURN(json lineage, ReadJsonFile(out_ / "lineage.json"));
  new_id_ = lineage.value("model_id", "");
  return absl::OkStatus();
}

// The collection under the current model is saved in <out>.adapt: the
// server's stored vectors, or what round 1 embeds in process when those
// cannot be had. Round 1's in-process mining and the old model's evaluation
// read them instead of embedding the whole collection (also after a resume),
// and they stay out of memory through the fine-tune.
void AdaptJob::SaveServerVectors() {
  old_vectors_ = {.file = side_ / "old_model_vectors.bin",
                  .key = {.model_id = facts_.model_id,
                          .documents = docs_.size(),
                          .dim = 0,  // the encoder's, once it is open
                          .documents_hash = DocumentsHash(docs_),
                          .settings = SettingsFingerprint(reading_.embed)}};
  old_vectors_from_server_ =
      !a_.embed_old && SaveStoredVectors(std::move(stored_), reading_.embed, old_vectors_);
}

AdaptJob::Round AdaptJob::RoundAt(int r) const {
  Round round;
  round.number = r;
  round.last = r == a_.rounds;
  round.out = round.last ? out_ : side_ / absl::StrCat("round", r);
  round.suffix = r == 1 ? "" : absl::StrCat(".round", r);
  round.train_file = side_ / absl::StrCat("train", round.suffix, ".jsonl");
  round.mining_file = side_ / absl::StrCat("mining", round.suffix, ".json");
  return round;
}

absl::Status AdaptJob::Mine(const Round& round) {
  const int r = round.number;
  std::error_code ec;
  if (a_.resume && fs::exists(round.train_file, ec)) {
    std::fprintf(stderr, "resuming: reusing %s\n", round.train_file.string().c_str());
    ASSIGN_OR_RETURN(json m, ReadJsonFile(round.mining_file));
    mining_.push_back(m);
    return absl::OkStatus();
  }
  const auto t = std::chrono::steady_clock::now();
  // The model in process: a later round mines the previous round's model;
  // the score rule needs the scores of the model being adapted.
  const bool in_process = r > 1 || (a_.negatives > 0 && a_.max_score_ratio > 0);
  ModelLegs model;
  if (in_process) {
    ASSIGN_OR_RETURN(model, MiningModel(round));
  }
  // Round 1's vector leg in process is the server's vector leg computed
  // exactly; served (hybrid) and keyword still come from their sources.
  const bool model_leg_is_vector = r > 1 || a_.mine_from == "vector";
  ASSIGN_OR_RETURN(json m, MineTrainingFile(server_, a_, docs_, *keyword_index_, split_.train,
                                            in_process ? &model : nullptr, model_leg_is_vector,
                                            progress_, round.train_file));
  m["round"] = r;
  m["vector_leg"] = r > 1 ? absl::StrCat("round ", r - 1, "'s model")
                    : in_process && model_leg_is_vector ? "vector (in process)"
                                                        : a_.mine_from;
  timings_[absl::StrCat("mine", round.suffix, "_s")] = SecondsSince(t);
  RETURN_IF_ERROR(WriteTextFile(round.mining_file, m.dump(2) + "\n"));
  if (r == 1) {
    RETURN_IF_ERROR(WriteTextFile(side_ / "held_out.jsonl", PairsJsonl(split_.held_out, docs_)));
  }
  mining_.push_back(m);
  return absl::OkStatus();
}

// The training queries' vector legs under the model being adapted (the
// previous round's, or the collection's in round 1: its saved vectors, when
// there are).
absl::StatusOr<ModelLegs> AdaptJob::MiningModel(const Round& round) const {
  const int r = round.number;
  const EmbedSettings& settings = reading_.embed;
  ASSIGN_OR_RETURN(std::unique_ptr<encoder::Encoder> enc,
                   OpenModel(base_dir_, a_.threads, settings.precision));
  std::vector<std::string> queries;
  for (const auto& q : split_.train) queries.push_back(q.query);
  std::optional<std::vector<float>> given;
  if (r == 1) {
    VectorCacheKey key = old_vectors_.key;
    key.dim = enc->dim();
    std::string why_not;
    given = LoadDocVectors(old_vectors_.file, key, &why_not);
  }
  const bool embedded = !given.has_value();
  ASSIGN_OR_RETURN(
      ModelLegs model,
      ModelVectorLegs(*enc, docs_, queries, settings, a_.mine_depth,
                      EmbedProgress(r > 1 ? absl::StrCat("round ", r - 1) : std::string("current"),
                                    progress_),
                      std::move(given)));
  if (r == 1 && embedded) SaveOldVectors(old_vectors_, model.doc_vecs, model.dim);
  return model;
}

absl::Status AdaptJob::Train(const Round& round) {
  std::error_code ec;
  encoder::train::FinetuneOptions ft;
  ft.model_dir = base_dir_;
  ft.train_file = round.train_file.string();
  ft.out_dir = round.out.string();
  ft.trainer = a_.trainer;
  // Each round its share of the steps; the last takes the remainder.
  const int64_t share = a_.trainer.steps / a_.rounds;
  ft.trainer.steps = round.last ? a_.trainer.steps - share * (a_.rounds - 1) : share;
  const int64_t warmup = a_.trainer.warmup == kWarmupTenth
                             ? std::max<int64_t>(1, ft.trainer.steps / 10)
                             : a_.trainer.warmup;
  ft.trainer.warmup = std::min(warmup, ft.trainer.steps);
  ft.trainer.resume = a_.resume && fs::exists(fs::path(round.out.string() + ".work"), ec);
  if (a_.negative_pool > a_.negatives) ft.trainer.negatives_per_pair = a_.negatives;
  ft.max_length = a_.max_length;
  ft.pooling = reading_.embed.pooling;  // train the vector the collection serves
  ft.threads = a_.threads;
  ft.truncate = true;
  ASSIGN_OR_RETURN(ft.lineage_extra, LineageExtra(round));
  const auto t = std::chrono::steady_clock::now();
  if (a_.rounds > 1)
    std::fprintf(stderr, "round %d of %d: %lld steps from %s\n", round.number, a_.rounds,
                 static_cast<long long>(ft.trainer.steps), base_dir_.c_str());
  RETURN_IF_ERROR(encoder::train::RunFinetune(ft, stderr));
  if (!fs::exists(round.out / "lineage.json", ec)) {
    return absl::AbortedError(
        "training stopped before its last step; run the same command with --resume");
  }
  timings_[absl::StrCat("finetune", round.suffix, "_s")] = SecondsSince(t);
  base_dir_ = round.out.string();
  return absl::OkStatus();
}

// What the new model's lineage.json says of how adapt made it.
absl::StatusOr<json> AdaptJob::LineageExtra(const Round& round) const {
  ASSIGN_OR_RETURN(const std::string pairs_hash, encoder::train::FileHash(a_.pairs));
  return json{
      {"negatives", a_.negatives == 0 ? std::string("in-batch")
                    : a_.negative_pool > a_.negatives
                        ? absl::StrCat("mined:", a_.negatives, "-of-", a_.negative_pool)
                        : absl::StrCat("mined:", a_.negatives)},
      {"adapt",
       {{"collection", a_.collection},
        {"collection_model_dir", facts_.model_dir},
        {"pairs_file", fs::absolute(a_.pairs).string()},
        {"pairs_hash", pairs_hash},
        {"eval", a_.eval_file.empty()
                     ? absl::StrCat("split:", a_.eval_split, ":seed:", a_.split_seed)
                     : fs::absolute(a_.eval_file).string()},
        {"mine_depth", a_.mine_depth},
        {"mine_from", a_.mine_from},
        {"mine_skip", a_.mine_skip},
        {"near_duplicate_jaccard", a_.jaccard},
        {"mine_max_score_ratio", a_.max_score_ratio},
        {"round", round.number},
        {"rounds", a_.rounds},
        {"mining", mining_.back()}}}};
}

}  // namespace neodb::adapt
