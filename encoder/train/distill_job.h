#pragma once
// The `neodb distill` job (issue 45): trains a NeoBERT student to reproduce a
// teacher model's embeddings on unlabelled text, in two stages:
//   1. the teacher cache (teacher_cache.h): the teacher's vectors of the
//      texts, computed once by neodb, resumable, reused by a rerun, a
//      --resume or another student that cuts the texts the same way;
//   2. RunFinetune (finetune.h) on that cache as its distillation file with
//      no pairs: DistillObjective's loss alone (the similarity structure,
//      plus the direct term 1 - cos(student, teacher) when the dimensions are
//      equal), its checkpoints in <out>.work, --resume, loss.csv and loss.png,
//      the output written beside --out and renamed into place.
// The teacher may be any architecture neodb runs; the student must be
// NeoBERT, the one the trainer runs (checked before any work).

#include <cstdio>
#include <string>

#include "common/status_macros.h"
#include "encoder/train/distill_objective.h"
#include "encoder/train/trainer.h"

namespace neodb::encoder::train {

struct DistillJobOptions {
  std::string teacher_dir;
  std::string student_dir;  // a NeoBERT checkpoint
  std::string texts_file;   // one text per line (teacher_cache.h)
  std::string out_dir;      // must not exist
  std::string cache_dir;    // the teacher cache. Default (empty): "<out_dir>.distill"
  std::string eval_file;    // optional JSONL pairs, evaluated before and after
  // Steps, learning rate, warm-up, seed, checkpoints, --resume. Default: the
  // trainer's, but lr 1e-4 (a student learns a new geometry rather than
  // nudging its own; not tuned). distill_weight is always 1.
  TrainerOptions trainer = [] {
    TrainerOptions t;
    t.lr = 1e-4;
    return t;
  }();
  // batch_size: teacher texts per step (Default: 64); direct_weight (Default: 1).
  DistillOptions distill = [] {
    DistillOptions d;
    d.direct_weight = 1;
    return d;
  }();
  int64_t teacher_batch_lines = 256;  // texts per teacher forward and cache append. Default: 256
  int threads = 0;  // CPU threads for the teacher and for training; 0 = every core. Default: 0
};

// Runs both stages. The training log goes to `log`, the teacher's embedding
// progress to `progress`.
absl::Status RunDistill(const DistillJobOptions& options, std::FILE* log, std::FILE* progress);

}  // namespace neodb::encoder::train
