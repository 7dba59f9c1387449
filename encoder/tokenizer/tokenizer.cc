#include "encoder/tokenizer/tokenizer.h"

#include <algorithm>
#include <filesystem>
#include <system_error>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "encoder/core/file_util.h"
#include "encoder/tokenizer/sentencepiece_tokenizer.h"
#include "encoder/tokenizer/wordpiece_json.h"
#include "encoder/tokenizer/wordpiece_tokenizer.h"

namespace neodb::encoder {
namespace {

constexpr size_t kMaxVocabBytes = size_t{64} << 20;
constexpr size_t kMaxJsonBytes = size_t{256} << 20;

// Wraps a loader error with the kind of file it came from.
absl::Status Annotate(const absl::Status& s, const std::string& what) {
  return absl::Status(s.code(), absl::StrCat("loading ", what, ": ", s.message()));
}

}  // namespace

absl::StatusOr<std::vector<int32_t>> Tokenizer::Encode(std::string_view text) const {
  ASSIGN_OR_RETURN(std::vector<int32_t> ids, Tokenize(text));
  ids.insert(ids.begin(), special().cls);
  ids.push_back(special().sep);
  return ids;
}

absl::StatusOr<std::unique_ptr<Tokenizer>> LoadTokenizer(const std::string& dir) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) {
    return absl::NotFoundError(absl::StrCat("tokenizer directory ", dir, " does not exist"));
  }
  TokenizerConfigOverrides overrides;
  const std::string config_path = dir + "/tokenizer_config.json";
  if (IsRegularFile(config_path)) {
    ASSIGN_OR_RETURN(std::string config, ReadWholeFile(config_path, kMaxJsonBytes));
    ASSIGN_OR_RETURN(overrides, ParseTokenizerConfig(config, config_path));
  }

  const std::string vocab_path = dir + "/vocab.txt";
  if (IsRegularFile(vocab_path)) {
    WordPieceOptions options;
    overrides.ApplyTo(&options);
    ASSIGN_OR_RETURN(std::string vocab, ReadWholeFile(vocab_path, kMaxVocabBytes));
    auto tok = WordPieceTokenizer::FromVocabText(vocab, options, vocab_path);
    if (!tok.ok()) return tok.status();
    return std::unique_ptr<Tokenizer>(std::move(tok).value());
  }

  const std::string json_path = dir + "/tokenizer.json";
  if (IsRegularFile(json_path)) {
    ASSIGN_OR_RETURN(std::string json, ReadWholeFile(json_path, kMaxJsonBytes));
    auto tok = WordPieceFromTokenizerJson(json, overrides, json_path);
    if (!tok.ok()) return Annotate(tok.status(), "the WordPiece vocab of tokenizer.json");
    return std::unique_ptr<Tokenizer>(std::move(tok).value());
  }

  std::string model_path = dir + "/tokenizer.model";
  if (!IsRegularFile(model_path)) {
    std::vector<std::string> models;
    for (const auto& entry : fs::directory_iterator(dir, ec)) {
      if (entry.path().extension() == ".model" && IsRegularFile(entry.path().string())) {
        models.push_back(entry.path().string());
      }
    }
    if (ec) {
      return absl::InternalError(absl::StrCat("cannot list ", dir, ": ", ec.message()));
    }
    if (models.size() > 1) {
      std::sort(models.begin(), models.end());
      return absl::InvalidArgumentError(
          absl::StrCat("tokenizer directory ", dir, " holds several SentencePiece models (",
                       absl::StrJoin(models, ", "), "); keep one or name it tokenizer.model"));
    }
    if (models.empty()) {
      return absl::NotFoundError(absl::StrCat(
          "no tokenizer in ", dir,
          ": looked for vocab.txt (WordPiece), tokenizer.json (WordPiece), tokenizer.model "
          "and *.model (SentencePiece)"));
    }
    model_path = models.front();
  }
  auto tok = SentencePieceTokenizer::FromFile(model_path);
  if (!tok.ok()) return tok.status();
  return std::unique_ptr<Tokenizer>(std::move(tok).value());
}

}  // namespace neodb::encoder
