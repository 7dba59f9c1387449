// neodb adapt / neodb adapt --rollback: make a live collection better with
// the user's (query, relevant document) pairs (adapt/README.md).
//
// The flags, and the job (adapt/adapt_job.h) run against the server over
// gRPC (tools/neodb/adapt_server_side.h). A client-side command
// (adapt/README.md argues why): the job lists the collection's documents and
// asks the server's own search for hard negatives, trains and evaluates
// here, and asks the server to swap the collection onto the new checkpoint
// (Admin.Reindex, the engine's atomic swap). The model directory must be
// readable by both the server and this command (same machine or shared file
// system).
#include <memory>
#include <string>

#include "adapt/adapt_job.h"
#include "adapt/adapt_options.h"
#include "tools/neodb/adapt_server_side.h"
#include "tools/neodb/client_common.h"
#include "tools/neodb/commands.h"

namespace neodb::cli {
namespace {

struct AdaptArgs {
  ClientFlags client;  // --server, --timeout (default 60 s), --api-key, --tls-*
  adapt::AdaptOptions job;
  std::string device = "cpu";  // --device: where the model trains
};

}  // namespace

void RegisterAdaptCommands(CLI::App& app) {
  auto a = std::make_shared<AdaptArgs>();
  // Measured on the shipped default model (adapt/README.md, SciFact):
  // 150 steps of 32 pairs at a peak lr of 2e-4 with a tenth of the steps as
  // warm-up. finetune's 2e-5 suits a full-size NeoBERT; this small model at
  // 2e-5 would barely move in 150 steps.
  a->job.trainer.steps = 150;
  a->job.trainer.lr = 2e-4;
  a->job.trainer.warmup = adapt::kWarmupTenth;
  CLI::App* cmd = app.add_subcommand(
      "adapt",
      "Fine-tune a collection's model on your (query, document) pairs with negatives mined from "
      "the collection, compare old and new, and swap the collection onto it (--apply)");
  a->client.timeout_s = 60;
  AddClientFlags(cmd, &a->client);
  auto* coll = cmd->add_option("--collection", a->job.collection, "The collection to adapt");
  auto* rb = cmd->add_option("--rollback", a->job.rollback,
                             "Swap this collection back to the model it had before adapt");
  coll->excludes(rb);
  auto* pairs = cmd->add_option(
      "--pairs", a->job.pairs,
      "JSONL {\"query\", \"positive_id\"} (or \"positive\": the document's text) per line");
  pairs->needs(coll);
  cmd->add_option("--eval", a->job.eval_file, "Held-out pairs (same format) instead of a split");
  cmd->add_option("--test", a->job.test_file,
                  "Pairs (same format) only reported, never used for a decision (e.g. a "
                  "benchmark's test split)");
  cmd->add_option("--eval-split", a->job.eval_split, "Fraction of the queries held out")
      ->capture_default_str();
  cmd->add_option("--split-seed", a->job.split_seed, "Seed of the split")->capture_default_str();
  cmd->add_option("--out", a->job.out,
                  "New model directory (default adapt-<collection>-<time> inside the server's "
                  "--models-dir when it has one, else in the current directory)");
  cmd->add_option("--negatives", a->job.negatives,
                  "Hard negatives per training pair in each step (0 = in-batch only)")
      ->capture_default_str();
  cmd->add_option("--negative-pool", a->job.negative_pool,
                  "Negatives mined per training query, of which each step draws --negatives "
                  "afresh (0 = exactly --negatives, always the same ones)")
      ->capture_default_str();
  cmd->add_option("--mine-from", a->job.mine_from,
                  "Where negatives are mined first: served (the collection's default ranking, "
                  "hybrid) | vector (its model alone) | keyword (BM25 alone)")
      ->capture_default_str();
  cmd->add_option("--rounds", a->job.rounds,
                  "Mining rounds: each round after the first mines again from the model the "
                  "round before trained, then trains it further (--steps in all)")
      ->capture_default_str();
  cmd->add_option("--mine-depth", a->job.mine_depth, "Top documents of each search leg mined")
      ->capture_default_str();
  cmd->add_option("--mine-skip", a->job.mine_skip,
                  "Top ranks of each leg passed over (likeliest unlabelled relevant documents)")
      ->capture_default_str();
  cmd->add_option("--mine-max-score-ratio", a->job.max_score_ratio,
                  "Candidates the current model scores above this x the query's positive are "
                  "passed over as likely unlabelled positives (e.g. 0.95; 0 = off)")
      ->capture_default_str();
  cmd->add_flag("--embed-old", a->job.embed_old,
                "Embed the collection with its current model in process instead of reading the "
                "vectors the server stores (to check them; slower)");
  cmd->add_option("--near-duplicate-jaccard", a->job.jaccard,
                  "Word-set Jaccard at or above which a candidate counts as a copy of a positive")
      ->capture_default_str();
  cmd->add_option("--steps", a->job.trainer.steps, "Optimiser steps")->capture_default_str();
  cmd->add_option("--batch-size", a->job.trainer.batch_size, "Pairs per step")
      ->capture_default_str();
  cmd->add_option("--lr", a->job.trainer.lr,
                  "Peak learning rate (2e-4 suits the default model; a full-size NeoBERT wants "
                  "about 2e-5)")
      ->capture_default_str();
  cmd->add_option("--warmup", a->job.trainer.warmup,
                  "Linear warm-up steps of each round (default: a tenth of its steps)");
  cmd->add_option("--temperature", a->job.trainer.temperature,
                  "InfoNCE temperature (as neodb finetune's; lower weighs the hardest negatives "
                  "more)")
      ->capture_default_str();
  cmd->add_option("--chunk-size", a->job.trainer.chunk_size, "GradCache chunk")
      ->capture_default_str();
  cmd->add_option("--seed", a->job.trainer.seed, "Seed of the data order")->capture_default_str();
  cmd->add_flag_callback(
      "--train-zero-weights", [a] { a->job.trainer.keep_zero_weights = false; },
      "Also train matrix entries that start at exactly 0 (see neodb finetune)");
  cmd->add_option("--checkpoint-every", a->job.trainer.checkpoint_every,
                  "Checkpoint into <out>.work every N steps")
      ->capture_default_str();
  cmd->add_option("--max-length", a->job.max_length,
                  "Tokens kept of each training text (0 = the model's max_length)");
  cmd->add_option("--threads", a->job.threads, "Compute threads (0 = default)");
  cmd->add_flag("--resume", a->job.resume,
                "Continue an interrupted run with the same --out (reuses mined pairs, training "
                "checkpoint, or a finished model)");
  cmd->add_flag("--apply", a->job.apply,
                "Reindex the collection onto the new model if it is better");
  cmd->add_option("--min-gain", a->job.min_gain,
                  "--apply needs new - old hybrid nDCG@10 above this (may be negative)")
      ->capture_default_str();
  cmd->add_option("--device", a->device,
                  "Where the model trains: cpu (default), cuda or cuda:N (the encoder's forward "
                  "and backward on that GPU, F32; an error where there is none), or auto (the "
                  "CPU: CUDA training is opt-in)")
      ->capture_default_str();
  cmd->callback([a] {
    a->job.trainer.device = ResolveTrainingDeviceOrExit("adapt", a->device);
    GrpcServerSide server(a->client);
    adapt::AdaptJob job(a->job, server, StderrProgress());
    if (!a->job.rollback.empty()) {
      ExitIfError(job.Rollback());
      return;
    }
    if (a->job.collection.empty() || a->job.pairs.empty()) {
      ExitIfError(
          absl::InvalidArgumentError("adapt needs --collection and --pairs (or --rollback)"));
    }
    ExitIfError(job.Run());
  });
}

}  // namespace neodb::cli
