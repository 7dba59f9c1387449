// neodb model init | convert | info: create a randomly initialised NeoBERT
// checkpoint directory, re-store one in another dtype, and describe one.
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <functional>
#include <memory>
#include <set>
#include <string>
#include <system_error>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/atomic_dir.h"
#include "common/env.h"
#include "encoder/checkpoint/presets.h"
#include "encoder/checkpoint/safetensors.h"
#include "encoder/checkpoint/weights.h"
#include "encoder/model.h"
#include "encoder/ops/low_precision_linear.h"
#include "encoder/tokenizer/tokenizer.h"
#include "tools/neodb/commands.h"

namespace neodb::cli {
namespace {

namespace fs = std::filesystem;
using encoder::DType;

struct InitArgs {
  std::string preset = "tiny";
  uint64_t seed = 0;
  std::string vocab;
  std::string like;  // a checkpoint directory whose config and tokenizer to copy
  std::string out;
  std::string dtype = "f32";
  bool force = false;
};

// Number of lines of a vocab.txt (a last line without '\n' counts).
absl::StatusOr<int64_t> CountLines(const std::string& path) {
  absl::StatusOr<std::unique_ptr<SequentialFile>> in = Env::Default()->NewSequentialFile(path);
  if (absl::IsNotFound(in.status())) {
    return absl::NotFoundError(absl::StrCat("cannot open vocab file ", path));
  }
  RETURN_IF_ERROR(in.status());
  int64_t lines = 0;
  char last = '\n';
  char buf[1 << 16];
  for (;;) {
    absl::StatusOr<size_t> n = (*in)->Read(sizeof(buf), buf);
    if (!n.ok()) {
      return absl::DataLossError(
          absl::StrCat("cannot read vocab file ", path, ": ", n.status().message()));
    }
    if (*n == 0) break;
    for (size_t i = 0; i < *n; ++i) lines += buf[i] == '\n';
    last = buf[*n - 1];
  }
  if (last != '\n') ++lines;
  if (lines == 0) return absl::InvalidArgumentError(absl::StrCat("vocab file ", path, " is empty"));
  return lines;
}

absl::StatusOr<DType> ParseDType(const std::string& s) {
  if (s == "f32") return DType::kF32;
  if (s == "f16") return DType::kF16;
  if (s == "bf16") return DType::kBF16;
  return absl::InvalidArgumentError(absl::StrCat("--dtype must be f32, f16 or bf16, not ", s));
}

// Writes a checkpoint directory at `out_arg`: `fill` writes its files into a
// temporary directory beside the target, the result is read back (which
// validates it and gives the model id of the stored, possibly F16/BF16-rounded
// weights), then renamed into place. A crash or an error never leaves a
// half-written model directory; --force replaces a non-empty one.
absl::StatusOr<std::string> WriteModelDir(const std::string& out_arg, bool force,
                                          const std::function<absl::Status(const fs::path&)>& fill) {
  std::error_code ec;
  fs::path out = fs::path(out_arg);
  if (out.has_filename() == false) out = out.parent_path();  // "dir/" → "dir"
  const bool exists = fs::exists(out, ec);
  if (exists && !fs::is_directory(out, ec)) {
    return absl::InvalidArgumentError(absl::StrCat(out.string(), " exists and is not a directory"));
  }
  // A non-empty target is replaced only with --force, moved aside first.
  const bool replace = exists && !fs::is_empty(out, ec);
  if (replace && !force) {
    return absl::InvalidArgumentError(
        absl::StrCat(out.string(), " exists and is not empty (use --force to replace it)"));
  }
  fs::path parent = out.parent_path().empty() ? fs::path(".") : out.parent_path();
  if (!fs::is_directory(parent, ec)) {
    return absl::NotFoundError(
        absl::StrCat("parent directory ", parent.string(), " does not exist"));
  }
  // Written beside the target, through the Env, and installed whole
  // (common/atomic_dir.h); --force moves a non-empty target aside first.
  Env* env = Env::Default();
  const std::string tmp =
      (parent / absl::StrCat(".", out.filename().string(), ".tmp.", ::getpid())).string();
  RETURN_IF_ERROR(env->DeleteTree(tmp));
  RETURN_IF_ERROR(env->CreateDir(tmp));
  absl::Status st = fill(fs::path(tmp));
  std::string model_id;
  if (st.ok()) {
    absl::StatusOr<encoder::NeoBertWeights> back = encoder::LoadCheckpoint(tmp);
    if (back.ok()) {
      model_id = back->model_id;
    } else {
      st = back.status();
    }
  }
  if (st.ok()) st = InstallDirectory(env, tmp, out.string(), replace ? tmp + ".old" : "");
  if (!st.ok()) {
    env->DeleteTree(tmp).IgnoreError();
    return st;
  }
  return model_id;
}

absl::Status Init(const InitArgs& a) {
  ASSIGN_OR_RETURN(const DType dtype, ParseDType(a.dtype));
  encoder::NeoBertConfig config;
  std::unique_ptr<encoder::Tokenizer> tokenizer;  // --like: the template's tokenizer
  if (!a.like.empty()) {
    if (!a.vocab.empty()) return absl::InvalidArgumentError("give --like or --vocab, not both");
    ASSIGN_OR_RETURN(config, encoder::NeoBertConfig::FromFile(a.like + "/config.json"));
    ASSIGN_OR_RETURN(tokenizer, encoder::LoadTokenizer(a.like));
  } else {
    if (a.vocab.empty()) return absl::InvalidArgumentError("--vocab (or --like DIR) is required");
    ASSIGN_OR_RETURN(const int64_t vocab_size, CountLines(a.vocab));
    ASSIGN_OR_RETURN(config, encoder::PresetConfig(a.preset, vocab_size));
  }
  const encoder::NeoBertWeights weights = encoder::RandomWeights(config, a.seed, true);
  ASSIGN_OR_RETURN(const std::string model_id,
                   WriteModelDir(a.out, a.force, [&](const fs::path& tmp) -> absl::Status {
                     RETURN_IF_ERROR(encoder::SaveCheckpoint(weights, tmp.string(), {.dtype = dtype}));
                     if (tokenizer) return tokenizer->SaveTo(tmp.string());
                     RETURN_IF_ERROR(
                         Env::Default()->CopyFile(a.vocab, (tmp / "vocab.txt").string()));
                     std::error_code ec;
                     fs::permissions(tmp / "vocab.txt", fs::perms(0644), ec);
                     return absl::OkStatus();
                   }));
  std::printf("wrote %s: %s, vocab_size %lld, %lld parameters, dtype %s, model_id %s\n",
              a.out.c_str(), a.like.empty() ? ("preset " + a.preset).c_str() : ("shape of " + a.like).c_str(),
              static_cast<long long>(config.vocab_size),
              static_cast<long long>(encoder::ParameterCount(weights)), a.dtype.c_str(),
              model_id.c_str());
  return absl::OkStatus();
}

struct ConvertArgs {
  std::string model;
  std::string out;
  std::string dtype = "f16";
  bool drop_head = false;
  bool force = false;
};

// Re-stores a checkpoint in another dtype (e.g. F16 to ship it at half the
// size), keeping its tokenizer and, unless --drop-head, its MLM head.
absl::Status Convert(const ConvertArgs& a) {
  ASSIGN_OR_RETURN(const DType dtype, ParseDType(a.dtype));
  ASSIGN_OR_RETURN(encoder::NeoBertWeights weights,
                   encoder::LoadCheckpoint(a.model, {.load_decoder = !a.drop_head}));
  ASSIGN_OR_RETURN(std::unique_ptr<encoder::Tokenizer> tokenizer, encoder::LoadTokenizer(a.model));
  ASSIGN_OR_RETURN(const std::string model_id,
                   WriteModelDir(a.out, a.force, [&](const fs::path& tmp) -> absl::Status {
                     RETURN_IF_ERROR(encoder::SaveCheckpoint(weights, tmp.string(), {.dtype = dtype}));
                     return tokenizer->SaveTo(tmp.string());
                   }));
  std::error_code ec;
  std::printf("wrote %s: dtype %s, %lld parameters%s, %lld bytes of weights, model_id %s (was %s)\n",
              a.out.c_str(), a.dtype.c_str(), static_cast<long long>(encoder::ParameterCount(weights)),
              weights.decoder_weight ? " with the MLM head" : "",
              static_cast<long long>(fs::file_size(fs::path(a.out) / "model.safetensors", ec)),
              model_id.c_str(), weights.model_id.c_str());
  return absl::OkStatus();
}

// `model info` of a BERT-family checkpoint: its shape, how its directory
// says to pool and prefix, and what it holds in memory.
absl::Status BertInfo(const std::string& dir) {
  ASSIGN_OR_RETURN(const encoder::BertWeights w, encoder::LoadBertCheckpoint(dir));
  ASSIGN_OR_RETURN(const encoder::ModelDefaults d, encoder::LoadModelDefaults(dir));
  const encoder::BertConfig& c = w.config;
  std::printf("model_dir            %s\n", dir.c_str());
  std::printf("architecture         bert\n");
  std::printf("model_id             %s\n", w.model_id.c_str());
  std::printf("hidden_size          %lld\n", static_cast<long long>(c.hidden_size));
  std::printf("num_hidden_layers    %lld\n", static_cast<long long>(c.num_hidden_layers));
  std::printf("num_attention_heads  %lld (head_dim %lld)\n",
              static_cast<long long>(c.num_attention_heads), static_cast<long long>(c.head_dim()));
  std::printf("intermediate_size    %lld\n", static_cast<long long>(c.intermediate_size));
  std::printf("vocab_size           %lld\n", static_cast<long long>(c.vocab_size));
  std::printf("max_length           %lld\n", static_cast<long long>(c.max_position_embeddings));
  std::printf("layer_norm_eps       %g\n", c.layer_norm_eps);
  std::printf("parameters           %lld\n", static_cast<long long>(encoder::ParameterCount(w)));
  std::printf("pooling              %s%s\n", d.pooling == encoder::Pooling::kCls ? "cls" : "mean",
              d.normalize ? ", normalized" : "");
  if (d.max_length > 0) {
    std::printf("max_seq_length       %lld (sentence_bert_config.json: longer texts are refused "
                "or chunked at it)\n",
                static_cast<long long>(d.max_length));
  }
  std::printf("query_prefix         \"%s\"\n", d.query_prefix.c_str());
  std::printf("document_prefix      \"%s\"\n", d.document_prefix.c_str());
  return absl::OkStatus();
}

absl::Status Info(const std::string& dir) {
  // The weights file first: its errors (missing, truncated) name it.
  ASSIGN_OR_RETURN(const std::string weights_path, encoder::WeightsFilePath(dir));
  ASSIGN_OR_RETURN(const encoder::SafetensorsFile file,
                   encoder::SafetensorsFile::Open(weights_path));
  ASSIGN_OR_RETURN(const encoder::Architecture arch, encoder::ReadArchitecture(dir));
  if (arch == encoder::Architecture::kBert) return BertInfo(dir);
  std::set<std::string> dtypes;
  for (const auto& t : file.tensors()) dtypes.insert(t.dtype_name);
  const bool has_head = file.Find("decoder.weight") != nullptr;
  ASSIGN_OR_RETURN(const encoder::NeoBertWeights w,
                   encoder::LoadCheckpoint(dir, {.load_decoder = has_head}));
  const encoder::NeoBertConfig& c = w.config;
  std::printf("model_dir            %s\n", dir.c_str());
  std::printf("architecture         neobert\n");
  std::printf("model_id             %s\n", w.model_id.c_str());
  std::printf("hidden_size          %lld\n", static_cast<long long>(c.hidden_size));
  std::printf("num_hidden_layers    %lld\n", static_cast<long long>(c.num_hidden_layers));
  std::printf("num_attention_heads  %lld (head_dim %lld)\n",
              static_cast<long long>(c.num_attention_heads), static_cast<long long>(c.head_dim()));
  std::printf("intermediate_size    %lld (ffn_dim %lld)\n",
              static_cast<long long>(c.intermediate_size), static_cast<long long>(c.ffn_dim()));
  std::printf("vocab_size           %lld\n", static_cast<long long>(c.vocab_size));
  std::printf("max_length           %lld\n", static_cast<long long>(c.max_length));
  std::printf("norm_eps             %g\n", c.norm_eps);
  std::printf("rope_theta           %g\n", c.rope_theta);
  std::printf("pad_token_id         %lld\n", static_cast<long long>(c.pad_token_id));
  std::printf("tensors              %zu\n", file.tensors().size());
  std::printf("dtype                %s\n", absl::StrJoin(dtypes, ",").c_str());
  std::printf("mlm_head             %s\n", has_head ? "yes" : "no");
  encoder::NeoBertWeights encoder_only = w;
  encoder_only.decoder_weight.reset();
  encoder_only.decoder_bias.reset();
  std::printf("parameters           %lld (encoder %lld)\n",
              static_cast<long long>(encoder::ParameterCount(w)),
              static_cast<long long>(encoder::ParameterCount(encoder_only)));
  // What the CPU backend holds for each --precision: projection and FFN
  // matrices converted at load, embeddings and norms F32 (MLM head not
  // counted). BF16/INT8 convert from the F32 tensors, which stay mapped.
  for (encoder::Precision p :
       {encoder::Precision::kF32, encoder::Precision::kBf16, encoder::Precision::kInt8}) {
    const std::string label = "memory " + std::string(encoder::PrecisionName(p));
    std::printf("%-20s %.1f MiB\n", label.c_str(),
                static_cast<double>(encoder::ops::EncoderWeightBytes(c, p)) / (1 << 20));
  }
  return absl::OkStatus();
}

}  // namespace

void RegisterModelCommands(CLI::App& app) {
  CLI::App* model = app.add_subcommand("model", "Create and inspect checkpoints (NeoBERT; info also reads the BERT family)");
  model->require_subcommand(1);

  auto init_args = std::make_shared<InitArgs>();
  CLI::App* init = model->add_subcommand("init", "Write a randomly initialised checkpoint");
  init->add_option("--preset", init_args->preset, "tiny, small or full")
      ->check(CLI::IsMember({"tiny", "small", "full"}))
      ->capture_default_str();
  init->add_option("--seed", init_args->seed, "random seed")->capture_default_str();
  init->add_option("--vocab", init_args->vocab, "vocab.txt (one token a line)");
  init->add_option("--like", init_args->like,
                   "take config.json and the tokenizer from this checkpoint directory instead of "
                   "--preset/--vocab (a random model of the same shape)");
  init->add_option("--out", init_args->out, "output directory")->required();
  init->add_option("--dtype", init_args->dtype, "storage type: f32, f16 or bf16")
      ->check(CLI::IsMember({"f32", "f16", "bf16"}))
      ->capture_default_str();
  init->add_flag("--force", init_args->force, "replace a non-empty output directory");
  init->callback([init_args] { ExitIfError(Init(*init_args)); });

  auto conv = std::make_shared<ConvertArgs>();
  CLI::App* convert = model->add_subcommand(
      "convert", "Re-store a checkpoint in another dtype (tokenizer and MLM head kept)");
  convert->add_option("--model", conv->model, "input checkpoint directory")->required();
  convert->add_option("--out", conv->out, "output directory")->required();
  convert->add_option("--dtype", conv->dtype, "storage type: f32, f16 or bf16")
      ->check(CLI::IsMember({"f32", "f16", "bf16"}))
      ->capture_default_str();
  convert->add_flag("--drop-head", conv->drop_head, "leave the MLM head out");
  convert->add_flag("--force", conv->force, "replace a non-empty output directory");
  convert->callback([conv] { ExitIfError(Convert(*conv)); });

  auto info_dir = std::make_shared<std::string>();
  CLI::App* info = model->add_subcommand("info", "Describe a checkpoint directory");
  info->add_option("--model", *info_dir, "checkpoint directory")->required();
  info->callback([info_dir] { ExitIfError(Info(*info_dir)); });
}

}  // namespace neodb::cli
