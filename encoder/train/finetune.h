#pragma once
// The `neodb finetune` and `neodb eval` jobs: load a checkpoint directory,
// read pair files, evaluate, train, and write a Hugging Face-layout output
// directory — atomically (a temporary directory renamed at the end, so a
// failed or interrupted run never leaves a half-written --out).

#include <cstdio>
#include <optional>
#include <string>

#include "common/env.h"
#include "common/status_macros.h"
#include "encoder/backend.h"
#include "encoder/train/retrieval_eval.h"
#include "encoder/train/trainer.h"
#include "nlohmann/json.hpp"

namespace neodb::encoder::train {

struct FinetuneOptions {
  std::string model_dir;   // input checkpoint (config.json, model.safetensors, tokenizer)
  // JSONL pairs; may be empty when distill_file is set (distillation alone).
  std::string train_file;
  std::string eval_file;   // optional JSONL pairs, evaluated before and after
  // Output directory; must not exist. While training, checkpoints live in
  // "<out_dir>.work/" (removed after success; kept for --resume otherwise).
  std::string out_dir;
  TrainerOptions trainer;  // checkpoint_dir is set from out_dir
  int64_t max_length = 0;  // longest accepted text in tokens; 0 = the model's max_length
  int threads = 0;         // OpenBLAS threads; 0 = library default
  // Auxiliary MLM loss (see Trainer): a plain-text corpus, one document per
  // line; empty = contrastive only. Needs a checkpoint with an MLM head. The
  // objective's seed is the trainer's; its weight is trainer.mlm_weight.
  std::string mlm_corpus;
  MlmObjectiveOptions mlm;
  // Similarity distillation (see DistillObjective): a JSONL teacher file
  // {"text", "vector"}; empty = none. Its seed is the trainer's, its chunk
  // size the trainer's, its weight trainer.distill_weight.
  std::string distill_file;
  DistillOptions distill;
  // Cut texts over max_length instead of rejecting them (TokenizePairs).
  // Default: false.
  bool truncate = false;
  // The sentence vector to train (the losses see it, eval uses it). Default
  // (unset): the model's own — mean for NeoBERT, a BERT's sentence-transformers
  // pooling (LoadModelDefaults). `neodb adapt` passes its collection's.
  std::optional<Pooling> pooling;
  // Merged into lineage.json (e.g. `neodb adapt`'s mining settings).
  nlohmann::json lineage_extra = nlohmann::json::object();
};

// The storage dtype of a checkpoint directory, from its config.json
// "torch_dtype" ("float16" → F16, "bfloat16" → BF16, anything else or none →
// F32). Fine-tuning writes its output in this dtype: F16 in, F16 out.
absl::StatusOr<DType> CheckpointStorageDType(const std::string& model_dir,
                                             Env* env = Env::Default());

// Hex XXH3-64 of a file's bytes (a data file's identity in lineage.json).
absl::StatusOr<std::string> FileHash(const std::string& path, Env* env = Env::Default());

// OK when `out_dir` is a path a job may create: not there yet, its parent a
// directory (ALREADY_EXISTS / NOT_FOUND otherwise; INVALID_ARGUMENT if empty).
absl::Status CheckNewOutputDir(const std::string& out_dir);

// Trains NeoBERT or BERT checkpoints (CheckTrainable); a BERT trains with
// its own pooling (sentence-transformers files; mean without them), NeoBERT
// with mean pooling. --mlm-corpus is NeoBERT's only.
// Output files: config.json, model.safetensors (in the input's storage dtype;
// original tensor names, MLM head kept if the input had it, trained with the
// encoder under --mlm-corpus; a BERT's config.json and sentence-transformers
// files are the input's, copied), tokenizer files, loss.csv, loss.png,
// finetune.json (settings and metrics) and lineage.json (what the model was
// made from: {"model_id", "parent": {"model_id", "dir"}, "train_file",
// "train_hash", "steps", "batch_size", "seed", "negatives", "dtype", ...
// lineage_extra}; the train_* keys, batch_size and the negatives only with a
// pair file). Progress goes to `log`.
absl::Status RunFinetune(const FinetuneOptions& options, std::FILE* log);

struct EvalOptions {
  std::string model_dir;
  std::string pairs_file;
  Pooling pooling = Pooling::kMean;
  // Use the model directory's own pooling (its sentence-transformers files;
  // mean when it has none) instead of `pooling`.
  bool pooling_from_model = false;
  int64_t max_length = 0;  // 0 = the model's max_length
  int threads = 0;
  // kF32 embeds with the training forward (as fine-tuning evaluates);
  // kBf16/kInt8 with the CPU inference backend in that precision (F32 with
  // a note on stderr when the CPU lacks the instructions).
  Precision precision = Precision::kF32;
  // kCuda embeds with the CUDA inference backend on device_index (its default
  // compute dtype; `precision` is a CPU setting and ignored). Default: CPU.
  Device device = Device::kCpu;
  int device_index = 0;
};

// NeoBERT with the training forward (F32) or the inference backends; other
// architectures (the BERT family) with their inference backend.
absl::StatusOr<RetrievalMetrics> RunEval(const EvalOptions& options);

// OK when `model_dir` holds a checkpoint of an architecture the trainer runs:
// NeoBERT or the BERT family (model_type "bert": MiniLM, BGE, E5) — that is,
// every architecture neodb loads; else ReadArchitecture's error. `neodb
// pretrain` (MLM) checks for NeoBERT itself.
absl::Status CheckTrainable(const std::string& model_dir);

// The sequence lengths training accepts for the model in `model_dir`: the
// longest it takes (NeoBERT max_length, BERT max_position_embeddings), and
// the one --max-length 0 means (NeoBERT: the same; BERT: its
// sentence_bert_config.json max_seq_length when smaller, as it is served).
struct TrainingLength {
  int64_t limit = 0;
  int64_t default_length = 0;
};
absl::StatusOr<TrainingLength> TrainingMaxLength(const std::string& model_dir);

// "R@1 0.4123  R@10 0.8000  MRR@10 0.5321  nDCG@10 0.6012  (300 queries, pool 339)"
std::string FormatMetrics(const RetrievalMetrics& m);

}  // namespace neodb::encoder::train
