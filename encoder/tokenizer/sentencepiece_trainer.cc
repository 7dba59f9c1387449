#include "encoder/tokenizer/sentencepiece_trainer.h"

#include <filesystem>
#include <string>
#include <system_error>
#include <unordered_map>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "encoder/tokenizer/sentencepiece_adapter.h"

namespace neodb::encoder {

absl::Status TrainSentencePiece(const SentencePieceTrainOptions& options) {
  namespace fs = std::filesystem;
  if (options.input_files.empty()) {
    return absl::InvalidArgumentError("TrainSentencePiece: no input_files");
  }
  for (const std::string& f : options.input_files) {
    if (f.find(',') != std::string::npos) {
      return absl::InvalidArgumentError(
          absl::StrCat("TrainSentencePiece: input path \"", f, "\" contains ','"));
    }
    std::error_code ec;
    if (!fs::is_regular_file(f, ec)) {
      return absl::NotFoundError(absl::StrCat("TrainSentencePiece: input ", f, " does not exist"));
    }
  }
  if (options.model_prefix.empty()) {
    return absl::InvalidArgumentError("TrainSentencePiece: model_prefix is empty");
  }
  if (options.vocab_size < 6) {
    return absl::InvalidArgumentError(absl::StrCat("TrainSentencePiece: vocab_size ",
                                                   options.vocab_size,
                                                   " leaves no room past the specials"));
  }
  if (options.model_type != "unigram" && options.model_type != "bpe") {
    return absl::InvalidArgumentError(absl::StrCat("TrainSentencePiece: model_type \"",
                                                   options.model_type, "\" is not unigram or bpe"));
  }
  if (!(options.character_coverage > 0.0 && options.character_coverage <= 1.0)) {
    return absl::InvalidArgumentError("TrainSentencePiece: character_coverage must be in (0, 1]");
  }
  if (options.num_threads < 1 || options.input_sentence_size < 0) {
    return absl::InvalidArgumentError(
        "TrainSentencePiece: num_threads must be >= 1 and input_sentence_size >= 0");
  }
  const std::unordered_map<std::string, std::string> args = {
      {"input", absl::StrJoin(options.input_files, ",")},
      {"model_prefix", options.model_prefix},
      {"vocab_size", absl::StrCat(options.vocab_size)},
      {"model_type", options.model_type},
      {"character_coverage", absl::StrCat(options.character_coverage)},
      {"hard_vocab_limit", options.hard_vocab_limit ? "true" : "false"},
      {"input_sentence_size", absl::StrCat(options.input_sentence_size)},
      {"num_threads", absl::StrCat(options.num_threads)},
      {"pad_id", "0"},
      {"unk_id", "1"},
      {"bos_id", "2"},
      {"eos_id", "3"},
      {"pad_piece", "[PAD]"},
      {"unk_piece", "[UNK]"},
      {"bos_piece", "[CLS]"},
      {"eos_piece", "[SEP]"},
      {"user_defined_symbols", "[MASK]"},
  };
  const spm::Result status = spm::Train(args);
  if (!status.ok()) {
    return absl::Status(static_cast<absl::StatusCode>(status.code),
                        absl::StrCat("SentencePiece training failed: ", status.message));
  }
  return absl::OkStatus();
}

}  // namespace neodb::encoder
