// neodb tokenizer train: trains a SentencePiece model with neodb's special
// tokens (TrainSentencePiece) and writes a directory LoadTokenizer reads.
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <string>
#include <system_error>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/env.h"
#include "common/status_macros.h"
#include "encoder/tokenizer/sentencepiece_trainer.h"
#include "encoder/tokenizer/tokenizer.h"
#include "tools/neodb/commands.h"

namespace neodb::cli {
namespace {

namespace fs = std::filesystem;

struct TrainArgs {
  std::vector<std::string> inputs;
  int vocab_size = 12000;
  std::string model_type = "unigram";
  std::string out;
  bool cased = false;
  double character_coverage = 0.9995;
  int64_t input_sentence_size = 2000000;
  int threads = 1;
  bool force = false;
};

// A sentence printed after training, so a log shows what the pieces look like.
constexpr char kSample[] = "Hello World: the retrieval of relevant passages, e.g. for 42 queries.";

absl::Status Train(const TrainArgs& a) {
  std::error_code ec;
  const fs::path out(a.out);
  if (fs::exists(out, ec) && !fs::is_directory(out, ec)) {
    return absl::InvalidArgumentError(absl::StrCat(a.out, " exists and is not a directory"));
  }
  const fs::path model = out / "tokenizer.model";
  if (fs::exists(model, ec) && !a.force) {
    return absl::InvalidArgumentError(
        absl::StrCat(model.string(), " exists (use --force to replace it)"));
  }
  RETURN_IF_ERROR(Env::Default()->CreateDir(out.string()));

  encoder::SentencePieceTrainOptions options;
  options.input_files = a.inputs;
  options.vocab_size = a.vocab_size;
  options.model_type = a.model_type;
  options.character_coverage = a.character_coverage;
  options.input_sentence_size = a.input_sentence_size;
  options.num_threads = a.threads;
  options.normalization_rule_name = a.cased ? "nmt_nfkc" : "nmt_nfkc_cf";
  // Train under a scratch prefix, then move into place: a failed run leaves no
  // half-written tokenizer.model behind.
  const std::string prefix = (out / ".tokenizer.training").string();
  options.model_prefix = prefix;
  const auto start = std::chrono::steady_clock::now();
  RETURN_IF_ERROR(encoder::TrainSentencePiece(options));
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  RETURN_IF_ERROR(Env::Default()->RenameFile(prefix + ".model", model.string()));
  RETURN_IF_ERROR(Env::Default()->RenameFile(prefix + ".vocab", (out / "tokenizer.vocab").string()));
  RETURN_IF_ERROR(Env::Default()->SyncDir(out.string()));

  // Round trip through the loader the encoder uses; SaveTo adds
  // special_tokens_map.json next to the model.
  ASSIGN_OR_RETURN(std::unique_ptr<encoder::Tokenizer> tok, encoder::LoadTokenizer(a.out));
  RETURN_IF_ERROR(tok->SaveTo(a.out));
  ASSIGN_OR_RETURN(std::vector<int32_t> ids, tok->Encode(kSample));
  std::vector<std::string> pieces;
  for (int32_t id : ids) pieces.push_back(tok->IdToToken(id));
  std::printf("trained %s tokenizer (%s, %s): %d pieces in %.1f s -> %s\n", a.model_type.c_str(),
              options.normalization_rule_name.c_str(), absl::StrJoin(a.inputs, ",").c_str(),
              tok->vocab_size(), seconds, model.string().c_str());
  std::printf("specials: [PAD]=%d [UNK]=%d [CLS]=%d [SEP]=%d [MASK]=%d\n", tok->special().pad,
              tok->special().unk, tok->special().cls, tok->special().sep, tok->special().mask);
  std::printf("sample: %s\n  -> %zu ids: %s\n", kSample, ids.size(),
              absl::StrJoin(pieces, " ").c_str());
  return absl::OkStatus();
}

}  // namespace

void RegisterTokenizerCommands(CLI::App& app) {
  CLI::App* tokenizer = app.add_subcommand("tokenizer", "Train tokenizers");
  tokenizer->require_subcommand(1);
  auto args = std::make_shared<TrainArgs>();
  CLI::App* train = tokenizer->add_subcommand(
      "train",
      "Train a SentencePiece model with neodb's special tokens ([PAD] [UNK] [CLS] [SEP] "
      "[MASK] = 0..4); writes OUT/tokenizer.model, tokenizer.vocab, special_tokens_map.json");
  train
      ->add_option("--input", args->inputs,
                   "Plain-text file(s), one sentence or paragraph per line")
      ->required()
      ->check(CLI::ExistingFile);
  train->add_option("--vocab-size", args->vocab_size, "Pieces, specials included")
      ->capture_default_str()
      ->check(CLI::Range(16, 1000000));
  train->add_option("--model-type", args->model_type, "unigram or bpe")
      ->capture_default_str()
      ->check(CLI::IsMember({"unigram", "bpe"}));
  train->add_option("--out", args->out, "Output directory (created if missing)")->required();
  train->add_flag("--cased", args->cased,
                  "Keep case (NFKC only); the default folds case (NFKC + case folding), baked "
                  "into the model so encoding folds too");
  train
      ->add_option("--character-coverage", args->character_coverage,
                   "Fraction of characters covered; the rest become [UNK]")
      ->capture_default_str()
      ->check(CLI::Range(0.5, 1.0));
  train
      ->add_option("--input-sentence-size", args->input_sentence_size,
                   "Lines sampled from the input (0 = all)")
      ->capture_default_str()
      ->check(CLI::NonNegativeNumber);
  train->add_option("--threads", args->threads, "Trainer threads")
      ->capture_default_str()
      ->check(CLI::Range(1, 256));
  train->add_flag("--force", args->force, "Replace an existing OUT/tokenizer.model");
  train->callback([args] { ExitIfError(Train(*args)); });
}

}  // namespace neodb::cli
