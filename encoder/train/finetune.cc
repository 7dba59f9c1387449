#include "encoder/train/finetune.h"

#include <cblas.h>
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <optional>

#include "absl/strings/str_cat.h"
#include "common/atomic_dir.h"
#include "common/atomic_file.h"
#include "common/env.h"
#include "common/file_chunks.h"
#include "absl/strings/str_format.h"
#include "encoder/checkpoint/weights.h"
#include "encoder/model.h"
#include "encoder/cuda/cuda_backend.h"
#include "encoder/ops/cpu_kernels.h"
#include "encoder/tokenizer/tokenizer.h"
#include "encoder/core/file_util.h"
#include "encoder/train/bert_checkpoint_io.h"
#include "encoder/train/loss_plot.h"
#include "nlohmann/json.hpp"
#include "xxhash.h"

namespace neodb::encoder::train {
namespace {

namespace fs = std::filesystem;

// Set by SIGINT/SIGTERM while training runs: the trainer stops after the
// current step and checkpoints, so --resume continues from exactly there.
std::atomic<bool> g_interrupted{false};
extern "C" void OnInterrupt(int) { g_interrupted.store(true); }

// Installs OnInterrupt for SIGINT and SIGTERM for its lifetime.
class InterruptScope {
 public:
  InterruptScope() {
    g_interrupted.store(false);
    struct sigaction sa {};
    sa.sa_handler = OnInterrupt;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, &old_int_);
    sigaction(SIGTERM, &sa, &old_term_);
  }
  ~InterruptScope() {
    sigaction(SIGINT, &old_int_, nullptr);
    sigaction(SIGTERM, &old_term_, nullptr);
  }

 private:
  struct sigaction old_int_ {
  }, old_term_{};
};

absl::StatusOr<int64_t> ResolveMaxLength(int64_t requested, int64_t limit, int64_t default_length) {
  if (requested < 0) return absl::InvalidArgumentError("--max-length must be >= 0");
  if (requested > limit) {
    return absl::InvalidArgumentError(
        absl::StrCat("--max-length ", requested, " exceeds the model's max_length ", limit));
  }
  return requested == 0 ? default_length : requested;
}

absl::StatusOr<int64_t> ResolveMaxLength(int64_t requested, const NeoBertConfig& config) {
  return ResolveMaxLength(requested, config.max_length, config.max_length);
}

// What training needs of the input beyond its parameters.
struct Source {
  Architecture architecture = Architecture::kNeoBert;
  NeoBertWeights neobert;  // NeoBERT only: the input (its MLM head goes to the output)
  std::string model_id;
  Pooling pooling = Pooling::kMean;
  int64_t limit = 0;           // the longest sequence the model takes
  int64_t default_length = 0;  // --max-length 0 means this
};

// The checkpoint with its MLM head when it has one (so the output keeps it).
absl::StatusOr<NeoBertWeights> LoadWithHeadIfPresent(const std::string& dir) {
  auto with_head = LoadCheckpoint(dir, {.load_decoder = true});
  if (with_head.ok() || with_head.status().code() != absl::StatusCode::kNotFound) {
    return with_head;
  }
  return LoadCheckpoint(dir);
}

absl::StatusOr<std::vector<TokenizedPair>> LoadPairs(const std::string& path,
                                                     const Tokenizer& tokenizer, int64_t max_length,
                                                     bool truncate = false) {
  ASSIGN_OR_RETURN(std::vector<TextPair> text, ReadPairs(path));
  return TokenizePairs(text, tokenizer, max_length, path, truncate);
}

const char* DTypeConfigName(DType dtype) {
  switch (dtype) {
    case DType::kF16:
      return "float16";
    case DType::kBF16:
      return "bfloat16";
    default:
      return "float32";
  }
}

std::string Duration(double seconds) {
  const int64_t s = static_cast<int64_t>(seconds + 0.5);
  if (s >= 3600) return absl::StrFormat("%dh%02dm", s / 3600, (s % 3600) / 60);
  if (s >= 60) return absl::StrFormat("%dm%02ds", s / 60, s % 60);
  return absl::StrFormat("%ds", s);
}

nlohmann::json MetricsJson(const RetrievalMetrics& m) {
  return {{"recall@1", m.recall_at_1}, {"recall@10", m.recall_at_10}, {"mrr@10", m.mrr_at_10},
          {"ndcg@10", m.ndcg_at_10},   {"queries", m.num_queries},    {"pool", m.pool_size}};
}

absl::Status WriteText(const fs::path& path, const std::string& text) {
  return WriteFileAtomically(Env::Default(), path.string(), {text});
}

// The trained checkpoint itself, in the input's architecture; returns the id
// of what was stored (F16/BF16-rounded), as the server will hash it.
absl::StatusOr<std::string> WriteCheckpoint(const fs::path& dir, const Trainer& trainer,
                                            const Source& source, const std::string& source_dir,
                                            const Tokenizer& tokenizer, DType dtype) {
  if (source.architecture == Architecture::kBert) {
    // config.json, tokenizer and sentence-transformers files: the source's.
    RETURN_IF_ERROR(SaveBertTrainParams(trainer.params(), source_dir, dir.string(), dtype));
    ASSIGN_OR_RETURN(const BertWeights stored, LoadBertCheckpoint(dir.string()));
    return stored.model_id;
  }
  const NeoBertWeights& original = source.neobert;
  NeoBertWeights weights = WeightsFromParams(trainer.params(), original);
  if (const MlmObjective* mlm = trainer.mlm(); mlm != nullptr) {
    const NeoBertConfig& config = original.config;
    weights.decoder_weight =
        VectorToTensor(mlm->decoder_weight(), {config.vocab_size, config.hidden_size});
    weights.decoder_bias = VectorToTensor(mlm->decoder_bias(), {config.vocab_size});
  }
  RETURN_IF_ERROR(SaveCheckpoint(weights, dir.string(), {.dtype = dtype}));
  RETURN_IF_ERROR(tokenizer.SaveTo(dir.string()));
  ASSIGN_OR_RETURN(NeoBertWeights stored, LoadCheckpoint(dir.string()));
  return stored.model_id;
}

// Everything that goes into the output directory, written into `dir`.
absl::Status WriteOutput(const fs::path& dir, const Trainer& trainer, const Source& source,
                         const std::string& source_dir, const Tokenizer& tokenizer,
                         const nlohmann::json& report, DType dtype, nlohmann::json lineage) {
  ASSIGN_OR_RETURN(lineage["model_id"],
                   WriteCheckpoint(dir, trainer, source, source_dir, tokenizer, dtype));
  RETURN_IF_ERROR(WriteText(dir / "lineage.json", lineage.dump(2) + "\n"));
  std::string csv =
      "step,loss,accuracy,lr,grad_norm,tokens,seconds,mlm_loss,mlm_accuracy,distill_loss,"
      "known_positives\n";
  std::vector<double> xs, ys;
  for (const StepRecord& r : trainer.history()) {
    absl::StrAppend(
        &csv, absl::StrFormat("%d,%.6f,%.4f,%.6g,%.4f,%d,%.3f,%.6f,%.4f,%.6f,%d\n", r.step, r.loss,
                              r.accuracy, r.lr, r.grad_norm, r.tokens, r.seconds, r.mlm_loss,
                              r.mlm_accuracy, r.distill_loss, r.known_positives));
    xs.push_back(static_cast<double>(r.step));
    ys.push_back(r.loss);
  }
  RETURN_IF_ERROR(WriteText(dir / "loss.csv", csv));
  RETURN_IF_ERROR(WriteLossPlotPng((dir / "loss.png").string(), xs, ys));
  return WriteText(dir / "finetune.json", report.dump(2) + "\n");
}

}  // namespace

absl::StatusOr<DType> CheckpointStorageDType(const std::string& model_dir, Env* env) {
  const std::string path = (fs::path(model_dir) / "config.json").string();
  ASSIGN_OR_RETURN(const std::string text, ReadFileToString(env, path));
  nlohmann::json config;
  try {
    config = nlohmann::json::parse(text);
  } catch (const nlohmann::json::exception& e) {
    return absl::InvalidArgumentError(
        absl::StrCat(model_dir, "/config.json: malformed JSON: ", e.what()));
  }
  const auto it = config.find("torch_dtype");
  if (it == config.end() || !it->is_string()) return DType::kF32;
  const std::string name = it->get<std::string>();
  if (name == "float16") return DType::kF16;
  if (name == "bfloat16") return DType::kBF16;
  return DType::kF32;
}

absl::StatusOr<std::string> FileHash(const std::string& path, Env* env) {
  std::unique_ptr<XXH3_state_t, XXH_errorcode (*)(XXH3_state_t*)> state(XXH3_createState(),
                                                                        XXH3_freeState);
  XXH3_64bits_reset(state.get());
  RETURN_IF_ERROR(ForEachFileChunk(env, path, 1 << 16, [&](std::string_view chunk) {
    XXH3_64bits_update(state.get(), chunk.data(), chunk.size());
  }));
  return absl::StrFormat("%016x", XXH3_64bits_digest(state.get()));
}

std::string FormatMetrics(const RetrievalMetrics& m) {
  return absl::StrFormat("R@1 %.4f  R@10 %.4f  MRR@10 %.4f  nDCG@10 %.4f  (%d queries, pool %d)",
                         m.recall_at_1, m.recall_at_10, m.mrr_at_10, m.ndcg_at_10, m.num_queries,
                         m.pool_size);
}

absl::Status CheckNewOutputDir(const std::string& out_dir) {
  if (out_dir.empty()) return absl::InvalidArgumentError("--out is required");
  const fs::path out = fs::path(out_dir).lexically_normal();
  std::error_code ec;
  if (fs::exists(out, ec)) {
    return absl::AlreadyExistsError(
        absl::StrCat("--out ", out.string(), " already exists; choose a new directory"));
  }
  const fs::path parent = out.has_parent_path() ? out.parent_path() : fs::path(".");
  if (!fs::is_directory(parent, ec)) {
    return absl::NotFoundError(
        absl::StrCat("the parent of --out (", parent.string(), ") is not a directory"));
  }
  return absl::OkStatus();
}

absl::Status RunFinetune(const FinetuneOptions& options, std::FILE* log) {
  RETURN_IF_ERROR(CheckNewOutputDir(options.out_dir));
  if (options.train_file.empty() && options.distill_file.empty()) {
    return absl::InvalidArgumentError(
        "--train is required (or --distill, to train on the distillation loss alone)");
  }
  RETURN_IF_ERROR(CheckTrainable(options.model_dir));
  const fs::path out = fs::path(options.out_dir).lexically_normal();
  std::error_code ec;
  if (options.threads > 0) openblas_set_num_threads(options.threads);

  Source source;
  ASSIGN_OR_RETURN(source.architecture, ReadArchitecture(options.model_dir));
  std::optional<TrainParams<float>> loaded;
  if (source.architecture == Architecture::kNeoBert) {
    ASSIGN_OR_RETURN(source.neobert, LoadWithHeadIfPresent(options.model_dir));
    loaded.emplace(ParamsFromWeights(source.neobert));
    source.model_id = source.neobert.model_id;
  } else {
    ASSIGN_OR_RETURN(TrainParams<float> bert,
                     LoadBertTrainParams(options.model_dir, &source.model_id));
    loaded.emplace(std::move(bert));
    ASSIGN_OR_RETURN(const ModelDefaults defaults, LoadModelDefaults(options.model_dir));
    source.pooling = defaults.pooling;  // the sentence vector the model is served with
  }
  if (options.pooling.has_value()) source.pooling = *options.pooling;
  ASSIGN_OR_RETURN(const TrainingLength length, TrainingMaxLength(options.model_dir));
  const ParamLayout& layout = loaded->layout;
  ASSIGN_OR_RETURN(std::unique_ptr<Tokenizer> tokenizer, LoadTokenizer(options.model_dir));
  ASSIGN_OR_RETURN(const int64_t max_length,
                   ResolveMaxLength(options.max_length, length.limit, length.default_length));
  ASSIGN_OR_RETURN(const DType dtype, CheckpointStorageDType(options.model_dir));
  std::vector<TokenizedPair> train;  // none: distillation alone
  if (!options.train_file.empty()) {
    ASSIGN_OR_RETURN(train,
                     LoadPairs(options.train_file, *tokenizer, max_length, options.truncate));
  }
  std::vector<TokenizedPair> eval_pairs;
  if (!options.eval_file.empty()) {
    ASSIGN_OR_RETURN(eval_pairs,
                     LoadPairs(options.eval_file, *tokenizer, max_length, options.truncate));
  }
  const fs::path work = fs::path(out.string() + ".work");
  TrainerOptions topt = options.trainer;
  topt.pooling = source.pooling;
  topt.checkpoint_dir = work.string();
  topt.cancel = &g_interrupted;
  if (!topt.resume && fs::exists(work / "checkpoint", ec)) {
    return absl::FailedPreconditionError(
        absl::StrCat("a previous run left a checkpoint in ", work.string(),
                     "; pass --resume to continue it, or delete that directory"));
  }
  std::fprintf(log, "model %s (%s): %d layers × %d, vocab %d; %zu training pairs, %zu eval pairs\n",
               options.model_dir.c_str(), std::string(ArchitectureName(source.architecture)).c_str(),
               static_cast<int>(layout.num_layers()), static_cast<int>(layout.hidden_size()),
               static_cast<int>(layout.vocab_size()), train.size(), eval_pairs.size());

  std::unique_ptr<MlmObjective> mlm;
  if (!options.mlm_corpus.empty() && source.architecture != Architecture::kNeoBert) {
    return absl::FailedPreconditionError(absl::StrCat(
        "--mlm-corpus: the auxiliary MLM loss trains NeoBERT checkpoints only; ", options.model_dir,
        " is a ", std::string(ArchitectureName(source.architecture)), " model"));
  }
  const NeoBertWeights& weights = source.neobert;
  if (!options.mlm_corpus.empty()) {
    if (!weights.decoder_weight || !weights.decoder_bias) {
      return absl::InvalidArgumentError(absl::StrCat(
          "--mlm-corpus needs a checkpoint with an MLM head (decoder.weight, decoder.bias); ",
          options.model_dir, " has none (fit one first: neodb pretrain --freeze-encoder)"));
    }
    ASSIGN_OR_RETURN(std::vector<int32_t> stream, TokenizeCorpus(options.mlm_corpus, *tokenizer));
    MlmObjectiveOptions mopt = options.mlm;
    mopt.seed = options.trainer.seed;
    mopt.adamw = options.trainer.adamw;
    ASSIGN_OR_RETURN(mlm,
                     MlmObjective::Create(weights.config, TensorToVector(*weights.decoder_weight),
                                          TensorToVector(*weights.decoder_bias), std::move(stream),
                                          tokenizer->special(), mopt));
    std::fprintf(log, "auxiliary MLM: %s, %lld training sequences of %lld tokens, weight %g\n",
                 options.mlm_corpus.c_str(), static_cast<long long>(mlm->num_chunks()),
                 static_cast<long long>(mopt.seq_len), options.trainer.mlm_weight);
  }

  std::unique_ptr<DistillObjective> distill;
  if (!options.distill_file.empty()) {
    ASSIGN_OR_RETURN(std::vector<TeacherText> texts,
                     ReadTeacherTexts(options.distill_file, *tokenizer, max_length));
    DistillOptions dopt = options.distill;
    dopt.seed = options.trainer.seed;
    dopt.chunk_size = options.trainer.chunk_size;
    ASSIGN_OR_RETURN(distill, DistillObjective::Create(std::move(texts), dopt));
    std::fprintf(log, "distillation: %s, %lld teacher texts (%lld-d), %lld per step, weight %g\n",
                 options.distill_file.c_str(), static_cast<long long>(distill->num_texts()),
                 static_cast<long long>(distill->teacher_dim()),
                 static_cast<long long>(dopt.batch_size), options.trainer.distill_weight);
    if (dopt.direct_weight > 0) {
      const int64_t c = layout.hidden_size();
      if (distill->UsesDirectTerm(c)) {
        std::fprintf(log, "distillation loss: similarity structure + %g × (1 - cos(student, "
                          "teacher)), both %lld-d\n",
                     dopt.direct_weight, static_cast<long long>(c));
      } else {
        std::fprintf(log,
                     "distillation loss: similarity structure alone (the teacher is %lld-d, the "
                     "student %lld-d: no direct term across dimensions)\n",
                     static_cast<long long>(distill->teacher_dim()), static_cast<long long>(c));
      }
    }
  }

  int64_t given_negatives = 0;
  for (const TokenizedPair& p : train) given_negatives += static_cast<int64_t>(p.negatives.size());
  nlohmann::json lineage = {
      {"parent", {{"model_id", source.model_id}, {"dir", options.model_dir}}},
      {"steps", options.trainer.steps},
      {"seed", options.trainer.seed},
      {"dtype", DTypeConfigName(dtype)}};
  if (!options.train_file.empty()) {
    ASSIGN_OR_RETURN(const std::string train_hash, FileHash(options.train_file));
    lineage["train_file"] = options.train_file;
    lineage["train_hash"] = train_hash;
    lineage["train_pairs"] = train.size();
    lineage["batch_size"] = options.trainer.batch_size;
    lineage["negatives"] = given_negatives > 0 ? "in-batch+given" : "in-batch";
    lineage["given_negatives"] = given_negatives;
  }
  if (distill != nullptr) {
    ASSIGN_OR_RETURN(const std::string distill_hash, FileHash(options.distill_file));
    lineage["distill_file"] = options.distill_file;
    lineage["distill_hash"] = distill_hash;
  }
  if (options.trainer.freeze_channel) lineage["freeze_channel"] = true;
  if (options.lineage_extra.is_object()) lineage.update(options.lineage_extra);

  TrainParams<float> params = *std::move(loaded);
  nlohmann::json report;
  report["model"] = options.model_dir;
  report["train_file"] = options.train_file;
  report["eval_file"] = options.eval_file;
  report["settings"] = {{"steps", topt.steps},
                        {"batch_size", topt.batch_size},
                        {"lr", topt.lr},
                        {"warmup", topt.warmup},
                        {"temperature", topt.temperature},
                        {"train_layers", topt.train_layers},
                        {"keep_zero_weights", topt.keep_zero_weights},
                        {"freeze_channel", topt.freeze_channel},
                        {"chunk_size", topt.chunk_size},
                        {"seed", topt.seed},
                        {"max_length", max_length},
                        {"pooling", source.pooling == Pooling::kCls ? "cls" : "mean"}};
  if (mlm != nullptr) {
    report["settings"]["mlm"] = mlm->Identity();
    report["settings"]["mlm"]["corpus"] = options.mlm_corpus;
    report["settings"]["mlm"]["weight"] = options.trainer.mlm_weight;
  }
  if (distill != nullptr) {
    report["settings"]["distill"] = distill->Identity();
    report["settings"]["distill"]["file"] = options.distill_file;
    report["settings"]["distill"]["weight"] = options.trainer.distill_weight;
  }
  const EvalSet eval_set = BuildEvalSet(eval_pairs);
  if (!eval_pairs.empty()) {
    const TrainModel<float> model(params.layout, source.pooling);
    const RetrievalMetrics before = Evaluate(model, params.values.data(), eval_set, source.pooling);
    std::fprintf(log, "eval before: %s\n", FormatMetrics(before).c_str());
    std::fflush(log);
    report["eval_before"] = MetricsJson(before);
  }

  const bool has_pairs = !train.empty();
  ASSIGN_OR_RETURN(std::unique_ptr<Trainer> trainer,
                   Trainer::Create(std::move(params), std::move(train), topt, std::move(mlm),
                                   std::move(distill)));
  if (trainer->frozen_zero_weights() > 0) {
    std::fprintf(
        log,
        "keeping %lld weights that start at exactly 0 at 0 (--train-zero-weights to train them)\n",
        static_cast<long long>(trainer->frozen_zero_weights()));
  }
  if (trainer->frozen_channel_weights() > 0) {
    std::fprintf(log, "keeping the %lld embedding entries of the pass-through channel as they are\n",
                 static_cast<long long>(trainer->frozen_channel_weights()));
  }
  if (topt.resume)
    std::fprintf(log, "resumed at step %lld\n", static_cast<long long>(trainer->step()));
  const int64_t every = std::max<int64_t>(1, topt.steps / 200);
  double elapsed = 0;
  int64_t tokens = 0, done_here = 0;
  {
    InterruptScope interrupt_scope;  // Ctrl-C: finish the step, checkpoint, stop
    RETURN_IF_ERROR(trainer->Run([&](const StepRecord& r) {
      elapsed += r.seconds;
      tokens += r.tokens;
      ++done_here;
      if (r.step % every != 0 && r.step != topt.steps && done_here != 1) return;
      const double per_step = elapsed / static_cast<double>(done_here);
      const std::string mlm_part =
          trainer->mlm() != nullptr
              ? absl::StrFormat("  mlm %.4f (acc %.3f)", r.mlm_loss, r.mlm_accuracy)
              : "";
      const std::string distill_part =
          trainer->distill() != nullptr ? absl::StrFormat("  distill %.4f", r.distill_loss) : "";
      // In-batch accuracy only where there are pairs to be accurate about.
      const std::string acc_part = has_pairs ? absl::StrFormat("  acc %.3f", r.accuracy) : "";
      std::fprintf(
          log, "step %lld/%lld  loss %.4f%s%s%s  lr %.3g  |g| %.3f  %.0f tok/s  ETA %s\n",
          static_cast<long long>(r.step), static_cast<long long>(topt.steps), r.loss,
          acc_part.c_str(), mlm_part.c_str(), distill_part.c_str(), r.lr, r.grad_norm,
          static_cast<double>(tokens) / elapsed,
          Duration(per_step * static_cast<double>(topt.steps - r.step)).c_str());
      std::fflush(log);
    }));
  }
  if (!trainer->finished()) {
    std::fprintf(log, "stopped at step %lld; continue with --resume (checkpoint in %s)\n",
                 static_cast<long long>(trainer->step()), work.string().c_str());
    return absl::OkStatus();
  }
  if (!eval_pairs.empty()) {
    const RetrievalMetrics after =
        Evaluate(trainer->model(), trainer->params().values.data(), eval_set, source.pooling);
    std::fprintf(log, "eval after:  %s\n", FormatMetrics(after).c_str());
    report["eval_after"] = MetricsJson(after);
  }

  // Write everything into a temporary sibling, then rename it into place.
  // Through the Env: the files are durable (WriteFileAtomically) before the
  // rename that makes the directory appear.
  Env* env = Env::Default();
  const fs::path tmp = fs::path(absl::StrCat(out.string(), ".tmp.", ::getpid()));
  RETURN_IF_ERROR(env->DeleteTree(tmp.string()));
  RETURN_IF_ERROR(env->CreateDir(tmp.string()));
  absl::Status written = WriteOutput(tmp, *trainer, source, options.model_dir, *tokenizer, report,
                                     dtype, lineage);
  if (written.ok()) written = InstallDirectory(env, tmp.string(), out.string());
  if (!written.ok()) {
    env->DeleteTree(tmp.string()).IgnoreError();
    return written;
  }
  env->DeleteTree(work.string()).IgnoreError();
  std::fprintf(log, "wrote %s\n", out.string().c_str());
  return absl::OkStatus();
}

absl::Status CheckTrainable(const std::string& model_dir) {
  // Both architectures neodb runs train (NeoBERT and the BERT family); an
  // unknown model_type is ReadArchitecture's error, which lists them.
  return ReadArchitecture(model_dir).status();
}

absl::StatusOr<TrainingLength> TrainingMaxLength(const std::string& model_dir) {
  ASSIGN_OR_RETURN(const Architecture arch, ReadArchitecture(model_dir));
  TrainingLength length;
  if (arch == Architecture::kNeoBert) {
    ASSIGN_OR_RETURN(const NeoBertConfig config, NeoBertConfig::FromFile(model_dir + "/config.json"));
    length.limit = length.default_length = config.max_length;
    return length;
  }
  ASSIGN_OR_RETURN(const std::string text, ReadWholeFile(model_dir + "/config.json", 1 << 20));
  ASSIGN_OR_RETURN(const BertConfig config, BertConfig::FromJson(text));
  ASSIGN_OR_RETURN(const ModelDefaults defaults, LoadModelDefaults(model_dir));
  length.limit = config.max_position_embeddings;
  // The length the model was published for (all-MiniLM-L6-v2: 256 of 512).
  length.default_length = defaults.max_length > 0
                              ? std::min(defaults.max_length, length.limit)
                              : length.limit;
  return length;
}

namespace {

// RunEval for an architecture the trainer does not run: its inference backend.
absl::StatusOr<RetrievalMetrics> EvalWithBackend(const EvalOptions& options, Pooling pooling,
                                                 const ModelDefaults& defaults) {
  ASSIGN_OR_RETURN(std::shared_ptr<const Model> model, LoadModel(options.model_dir));
  ASSIGN_OR_RETURN(std::unique_ptr<Tokenizer> tokenizer, LoadTokenizer(options.model_dir));
  const int64_t limit = defaults.max_length > 0 ? std::min(defaults.max_length, model->max_length())
                                                : model->max_length();
  if (options.max_length < 0 || options.max_length > limit) {
    return absl::InvalidArgumentError(
        absl::StrCat("--max-length ", options.max_length, " must be in 0..", limit));
  }
  ASSIGN_OR_RETURN(std::vector<TokenizedPair> pairs,
                   LoadPairs(options.pairs_file, *tokenizer,
                             options.max_length == 0 ? limit : options.max_length));
  BackendOptions backend;
  backend.device = options.device;
  backend.device_index = options.device_index;
  backend.num_threads = std::max(1, options.threads);
  std::string why;
  const Precision precision = CpuPrecisionFor(options.precision, &why);
  if (!why.empty() && options.device == Device::kCpu) {
    std::fprintf(stderr, "neodb eval: %s\n", why.c_str());
  }
  ASSIGN_OR_RETURN(std::unique_ptr<Backend> b, model->MakeBackend(backend, precision));
  return Evaluate(*b, model->hidden_size(), BuildEvalSet(pairs), pooling);
}

}  // namespace

absl::StatusOr<RetrievalMetrics> RunEval(const EvalOptions& options) {
  if (options.threads > 0) openblas_set_num_threads(options.threads);
  ASSIGN_OR_RETURN(const ModelDefaults defaults, LoadModelDefaults(options.model_dir));
  const Pooling pooling = options.pooling_from_model ? defaults.pooling : options.pooling;
  ASSIGN_OR_RETURN(const Architecture arch, ReadArchitecture(options.model_dir));
  if (arch != Architecture::kNeoBert) return EvalWithBackend(options, pooling, defaults);
  ASSIGN_OR_RETURN(NeoBertWeights weights, LoadCheckpoint(options.model_dir));
  ASSIGN_OR_RETURN(std::unique_ptr<Tokenizer> tokenizer, LoadTokenizer(options.model_dir));
  ASSIGN_OR_RETURN(const int64_t max_length, ResolveMaxLength(options.max_length, weights.config));
  ASSIGN_OR_RETURN(std::vector<TokenizedPair> pairs,
                   LoadPairs(options.pairs_file, *tokenizer, max_length));
  if (options.device == Device::kCuda) {
    BackendOptions backend;
    backend.device = Device::kCuda;
    backend.device_index = options.device_index;
    const int64_t dim = weights.config.hidden_size;
    ASSIGN_OR_RETURN(
        std::unique_ptr<Backend> cuda,
        MakeCudaBackend(std::make_shared<const NeoBertWeights>(std::move(weights)), backend));
    return Evaluate(*cuda, dim, BuildEvalSet(pairs), pooling);
  }
  if (options.precision != Precision::kF32) {
    std::string why;
    const Precision precision = CpuPrecisionFor(options.precision, &why);
    if (!why.empty()) std::fprintf(stderr, "neodb eval: %s\n", why.c_str());
    const int64_t dim = weights.config.hidden_size;
    std::unique_ptr<Backend> backend =
        MakeCpuBackend(std::make_shared<const NeoBertWeights>(std::move(weights)),
                       std::max(1, options.threads), precision);
    return Evaluate(*backend, dim, BuildEvalSet(pairs), pooling);
  }
  const TrainParams<float> params = ParamsFromWeights(weights);
  const TrainModel<float> model(params.layout);
  return Evaluate(model, params.values.data(), BuildEvalSet(pairs), pooling);
}

}  // namespace neodb::encoder::train
