// neodb finetune / neodb eval / neodb distill: contrastive fine-tuning on a
// pair file, retrieval evaluation (encoder/train/finetune.h) and distillation
// from a teacher model on plain text (encoder/train/distill_job.h).
#include <cstdio>
#include <memory>

#include "encoder/device.h"
#include "encoder/train/distill_job.h"
#include "encoder/train/finetune.h"
#include "encoder/train/train_device.h"
#include "tools/neodb/commands.h"

namespace neodb::cli {

// The --device of a training command (encoder/train/train_device.h); says on
// stderr where training runs unless that is the CPU by default.
encoder::train::TrainingDevice ResolveTrainingDeviceOrExit(const char* command,
                                                          const std::string& device) {
  std::string note;
  absl::StatusOr<encoder::train::TrainingDevice> d =
      encoder::train::ResolveTrainingDevice(device, &note);
  ExitIfError(d.status());
  if (!note.empty()) std::fprintf(stderr, "neodb %s: %s\n", command, note.c_str());
  if (d->cuda) {
    std::fprintf(stderr, "neodb %s: training on %s\n", command,
                 encoder::train::TrainingDeviceName(*d).c_str());
  }
  return *d;
}

namespace {

// The Trainer's options (encoder/train/trainer.h) that finetune and distill
// both offer, with one meaning. (adapt trains in rounds and gives --warmup and
// --lr a meaning of its own: cmd_adapt.cc.)
void AddTrainerFlags(CLI::App* cmd, encoder::train::TrainerOptions* t) {
  cmd->add_option("--steps", t->steps, "Optimiser steps")->capture_default_str();
  cmd->add_option("--lr", t->lr, "Peak learning rate")->capture_default_str();
  cmd->add_option("--warmup", t->warmup, "Linear warm-up steps")->capture_default_str();
  cmd->add_option("--seed", t->seed, "Seed of the data order")->capture_default_str();
  cmd->add_option("--checkpoint-every", t->checkpoint_every,
                  "Checkpoint into <out>.work every N steps (0 = never)")
      ->capture_default_str();
  cmd->add_option("--stop-after", t->stop_after,
                  "Stop after step N as if interrupted (checkpoints; resume later)");
}

// neodb distill: the teacher's vectors of plain text (cached, resumable), then
// a NeoBERT student trained on the distillation loss alone.
void RegisterDistillCommand(CLI::App& app) {
  using encoder::train::DistillJobOptions;
  auto o = std::make_shared<DistillJobOptions>();
  CLI::App* cmd = app.add_subcommand(
      "distill",
      "Train a NeoBERT student to reproduce a teacher model's embeddings on unlabelled text "
      "(one text per line); the teacher's vectors are computed once and cached");
  cmd->add_option("--teacher", o->teacher_dir,
                  "Teacher checkpoint directory (NeoBERT or the BERT family; its own pooling, "
                  "normalisation and document prompt)")
      ->required();
  cmd->add_option("--student", o->student_dir, "Student NeoBERT checkpoint directory")
      ->required();
  cmd->add_option("--texts", o->texts_file,
                  "Plain text, one text per line (blank lines skipped; a text over either "
                  "model's max_length is cut at a word boundary to fit both, and counted)")
      ->required()
      ->check(CLI::ExistingFile);
  cmd->add_option("--out", o->out_dir, "Output checkpoint directory (must not exist)")->required();
  cmd->add_option("--cache", o->cache_dir,
                  "Teacher cache directory (cache.json, teacher.jsonl); default <out>.distill. "
                  "Reused when it holds this teacher's vectors of these texts, refused otherwise");
  cmd->add_option("--eval", o->eval_file, "JSONL pairs evaluated before and after");
  AddTrainerFlags(cmd, &o->trainer);
  cmd->add_option("--batch", o->distill.batch_size, "Texts per step")->capture_default_str();
  cmd->add_option("--direct-weight", o->distill.direct_weight,
                  "Weight of the direct term 1 - cos(student, teacher), used when both have one "
                  "dimension (0 = the similarity-structure term alone)")
      ->capture_default_str();
  cmd->add_flag("--resume", o->trainer.resume,
                "Continue training from the checkpoint in <out>.work (same settings); the "
                "teacher cache is reused or completed either way");
  cmd->add_option("--threads", o->threads, "CPU threads (0 = every core)")->capture_default_str();
  cmd->add_option("--teacher-batch-lines", o->teacher_batch_lines,
                  "Texts per teacher forward pass and per cache append")
      ->capture_default_str();
  auto device = std::make_shared<std::string>("cpu");
  cmd->add_option("--device", *device,
                  "Where the student trains: cpu (default), cuda or cuda:N (the encoder's forward "
                  "and backward on that GPU, F32; an error where there is none), or auto (the "
                  "CPU: CUDA training is opt-in)")
      ->capture_default_str();
  cmd->callback([o, device] {
    o->trainer.device = ResolveTrainingDeviceOrExit("distill", *device);
    ExitIfError(encoder::train::RunDistill(*o, stdout, stderr));
  });
}

}  // namespace

void RegisterTrainCommands(CLI::App& app) {
  using encoder::train::EvalOptions;
  using encoder::train::FinetuneOptions;

  auto ft = std::make_shared<FinetuneOptions>();
  CLI::App* finetune = app.add_subcommand(
      "finetune", "Contrastive fine-tuning (InfoNCE, in-batch + hard negatives) on JSONL pairs");
  finetune->add_option("--model", ft->model_dir, "Input checkpoint directory")->required();
  finetune->add_option("--train", ft->train_file,
                       "JSONL {\"query\", \"positive\", \"negatives\": [...]} pairs (required "
                       "unless --distill is given: then the distillation loss alone)");
  finetune->add_option("--eval", ft->eval_file, "JSONL pairs evaluated before and after");
  finetune->add_option("--out", ft->out_dir, "Output checkpoint directory (must not exist)")
      ->required();
  AddTrainerFlags(finetune, &ft->trainer);
  finetune->add_option("--batch-size", ft->trainer.batch_size, "Pairs per step")
      ->capture_default_str();
  finetune->add_option("--temperature", ft->trainer.temperature, "InfoNCE temperature")
      ->capture_default_str();
  finetune
      ->add_option("--train-layers", ft->trainer.train_layers,
                   "Train only the top N layers and the final norm (0, or N = the model's layer "
                   "count: everything, the embeddings included)")
      ->capture_default_str();
  finetune
      ->add_option("--chunk-size", ft->trainer.chunk_size,
                   "Sequences per forward pass with activations (GradCache chunk)")
      ->capture_default_str();
  finetune
      ->add_option("--max-length", ft->max_length,
                   "Longest accepted text in tokens (0 = the model's max_length)")
      ->capture_default_str();
  finetune
      ->add_option("--negatives-per-pair", ft->trainer.negatives_per_pair,
                   "Negatives drawn afresh from each pair's list every time the pair comes "
                   "round (0 = the whole list)")
      ->capture_default_str();
  finetune->add_flag_callback(
      "--train-zero-weights", [ft] { ft->trainer.keep_zero_weights = false; },
      "Also train matrix entries that start at exactly 0 (kept at 0 by default: in a trained "
      "checkpoint they are structure, e.g. the blocks that keep the default model's GloVe "
      "channel apart from its layers)");
  finetune->add_flag(
      "--freeze-channel", ft->trainer.freeze_channel,
      "Keep the embedding columns of the dims no layer reads or writes (a pass-through "
      "channel, e.g. the default model's GloVe channel) exactly as they are, so that training "
      "moves only the layers; an error for a model without such dims");
  finetune
      ->add_option("--weight-decay", ft->trainer.adamw.weight_decay,
                   "AdamW weight decay on matrices (not on norm weights)")
      ->capture_default_str();
  finetune->add_flag("--resume", ft->trainer.resume,
                     "Continue from the checkpoint in <out>.work (same settings)");
  finetune->add_option("--threads", ft->threads, "OpenBLAS threads (0 = default)");
  finetune
      ->add_option("--mlm-corpus", ft->mlm_corpus,
                   "Plain-text corpus for an auxiliary MLM loss (needs a model with an MLM head)")
      ->check(CLI::ExistingFile);
  finetune->add_option("--mlm-weight", ft->trainer.mlm_weight, "Weight of the auxiliary MLM loss")
      ->capture_default_str();
  finetune
      ->add_option("--mlm-batch-tokens", ft->mlm.batch_tokens,
                   "MLM tokens per step (a multiple of --mlm-seq-len)")
      ->capture_default_str();
  finetune
      ->add_option("--mlm-seq-len", ft->mlm.seq_len, "MLM sequence length ([CLS]/[SEP] included)")
      ->capture_default_str();
  finetune
      ->add_option("--distill", ft->distill_file,
                   "JSONL {\"text\", \"vector\"} teacher embeddings for a similarity-distillation "
                   "loss (research/glove/sif.py teacher)")
      ->check(CLI::ExistingFile);
  finetune
      ->add_option("--distill-weight", ft->trainer.distill_weight,
                   "Weight of the distillation loss")
      ->capture_default_str();
  finetune->add_option("--distill-batch", ft->distill.batch_size, "Teacher texts per step")
      ->capture_default_str();
  auto ft_device = std::make_shared<std::string>("cpu");
  finetune
      ->add_option("--device", *ft_device,
                   "cpu (default), cuda or cuda:N (the encoder's forward and backward on that "
                   "GPU, F32; an error where there is none), or auto (the CPU: CUDA training is "
                   "opt-in)")
      ->capture_default_str();
  finetune->callback([ft, ft_device] {
    ft->trainer.device = ResolveTrainingDeviceOrExit("finetune", *ft_device);
    ExitIfError(encoder::train::RunFinetune(*ft, stdout));
  });

  RegisterDistillCommand(app);

  auto ev = std::make_shared<EvalOptions>();
  auto pooling = std::make_shared<std::string>();  // empty: the model's own
  CLI::App* eval = app.add_subcommand(
      "eval", "Recall@1/@10, MRR@10, nDCG@10 of each query against all texts of a pair file");
  eval->add_option("--model", ev->model_dir, "Checkpoint directory")->required();
  eval->add_option("--pairs", ev->pairs_file, "JSONL pairs")->required();
  eval->add_option("--pooling", *pooling,
                   "mean or cls (default: the model directory's own, from its "
                   "sentence-transformers files; mean when it has none)")
      ->check(CLI::IsMember({"mean", "cls"}));
  eval->add_option("--max-length", ev->max_length, "0 = the model's max_length");
  eval->add_option("--threads", ev->threads, "OpenBLAS threads (0 = default)");
  auto precision = std::make_shared<std::string>("f32");
  eval->add_option("--precision", *precision,
                   "f32 (default: the training forward), bf16 or int8 (the CPU inference "
                   "backend in that precision)")
      ->check(CLI::IsMember({"f32", "bf16", "int8"}))
      ->capture_default_str();
  auto device = std::make_shared<std::string>("cpu");
  eval->add_option("--device", *device,
                   "cpu (default), cuda, cuda:N or auto: cuda embeds with the CUDA inference "
                   "backend; asking for CUDA where there is none is an error")
      ->capture_default_str();
  eval->callback([ev, pooling, precision, device] {
    ev->pooling_from_model = pooling->empty();
    ev->pooling = *pooling == "cls" ? encoder::Pooling::kCls : encoder::Pooling::kMean;
    ev->precision = *encoder::ParsePrecision(*precision);
    auto request = encoder::ParseDevice(*device);
    ExitIfError(request.status());
    encoder::BackendOptions backend;
    ExitIfError(encoder::ResolveDevice(*request, &backend));
    ev->device = backend.device;
    ev->device_index = backend.device_index;
    if (request->kind == encoder::DeviceRequest::Kind::kAuto) {
      std::fprintf(stderr, "neodb eval: --device auto chose %s\n",
                   encoder::BackendDeviceName(backend.device, backend.device_index).c_str());
    }
    auto metrics = encoder::train::RunEval(*ev);
    ExitIfError(metrics.status());
    std::printf("%s\n", encoder::train::FormatMetrics(*metrics).c_str());
  });
}

}  // namespace neodb::cli
