#pragma once
// The adapt job: makes a live collection better with the user's (query,
// relevant document) pairs (adapt/README.md). It lists the collection's
// documents and asks the server's own search for hard negatives, trains and
// evaluates in process (encoder/train, this room), and asks the server to
// swap the collection onto the new checkpoint (the engine's atomic reindex).
// The server is a ServerSide (adapt/server_side.h); the model directory must
// be readable by both (same machine or shared file system).
//
// Files: <out>/ is the new checkpoint (with lineage.json, and adapt.json: the
// collection's previous model, which Rollback swaps back to);
// <out>.adapt/ holds the mined training pairs and the held-out queries
// (kept, so a --resume reuses them); <out>.work/ the training checkpoints.
//
// Progress and notes go to stderr, the table and the decision to stdout, as
// `neodb adapt` has always printed them. The stages' bodies: adapt_job.cc
// (preconditions, the collection and the pairs), adapt_rounds.cc (mining and
// training), adapt_outcome.cc (evaluation, report, record, apply),
// adapt_rollback.cc.

#include <chrono>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "adapt/adapt_options.h"
#include "adapt/adapt_pairs.h"
#include "adapt/collection_eval.h"
#include "adapt/model_vectors.h"
#include "adapt/server_side.h"
#include "index/keyword/keyword_index.h"
#include "nlohmann/json.hpp"

namespace neodb::adapt {

class AdaptJob {
 public:
  // `server` outlives the job.
  AdaptJob(AdaptOptions options, ServerSide& server, NewProgress progress = nullptr);

  // The adapt: each stage in order; the first error ends it. Every check that
  // can fail without training runs before anything is written or trained.
  absl::Status Run();
  // --rollback: options.rollback back onto the model (and fusion) it had
  // before adapt, as its model's adapt.json records.
  absl::Status Rollback();

 private:
  // One mining-and-training round's names.
  struct Round {
    int number = 1;
    bool last = true;
    std::filesystem::path out;  // its model: <out>, or <out>.adapt/roundK before the last
    std::string suffix;         // "" for round 1, ".roundK" after
    std::filesystem::path train_file;
    std::filesystem::path mining_file;
  };

  // The stages of Run.
  absl::Status CheckPreconditions();
  absl::Status ReadCollection();
  absl::Status MineAndTrain();
  absl::Status Evaluate();
  absl::Status Report();
  absl::Status WriteRecord();
  absl::Status Apply();
  absl::Status Finish();

  // CheckPreconditions' parts.
  absl::Status CheckCollection() const;
  absl::Status ChooseOut();
  absl::Status CheckApply() const;
  // ReadCollection's part: the pairs, split into training and held-out.
  absl::Status ReadPairs();
  // MineAndTrain's parts.
  void SaveServerVectors();
  Round RoundAt(int r) const;
  absl::Status Mine(const Round& round);
  absl::StatusOr<ModelLegs> MiningModel(const Round& round) const;
  absl::Status Train(const Round& round);
  absl::StatusOr<nlohmann::json> LineageExtra(const Round& round) const;
  // Evaluate's part: a query set with its keyword legs.
  absl::StatusOr<QuerySet> MakeQuerySet(std::vector<QueryPositives> queries) const;
  nlohmann::json PreviousModel() const;

  const AdaptOptions a_;
  ServerSide& server_;
  const NewProgress progress_;

  std::chrono::steady_clock::time_point t_all_;
  nlohmann::json timings_ = nlohmann::json::object();
  // CheckPreconditions.
  CollectionFacts facts_;
  CollectionReading reading_;
  std::string models_dir_;
  std::filesystem::path out_, side_;
  bool trained_ = false;  // --resume of a run whose model is finished
  // ReadCollection.
  StoredVectors stored_;
  CollectionDocs docs_;
  std::unique_ptr<keyword::KeywordIndex> keyword_index_;
  PairSplit split_;
  // MineAndTrain.
  SavedVectors old_vectors_;
  bool old_vectors_from_server_ = false;
  nlohmann::json mining_ = nlohmann::json::array();
  std::string base_dir_;
  std::string new_id_;
  // Evaluate.
  QuerySet held_, test_;
  RankMetrics keyword_only_;
  std::vector<ModelQuality> before_sets_, after_sets_;
  bool reuse_old_ = false;
  size_t best_at_ = 0;  // the new model's best fusion on the held-out pairs
  // Report, WriteRecord.
  nlohmann::json differences_;
  nlohmann::json record_;
  double gain_ = 0;
};

}  // namespace neodb::adapt
