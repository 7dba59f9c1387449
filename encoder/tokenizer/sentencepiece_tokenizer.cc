#include "encoder/tokenizer/sentencepiece_tokenizer.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/atomic_file.h"
#include "encoder/core/file_util.h"
#include "encoder/tokenizer/unicode_util.h"

namespace neodb::encoder {
namespace {

constexpr size_t kMaxModelBytes = size_t{1} << 30;

absl::Status FromSpStatus(const spm::Result& r, const std::string& what) {
  if (r.ok()) return absl::OkStatus();
  return absl::Status(static_cast<absl::StatusCode>(r.code), absl::StrCat(what, ": ", r.message));
}

}  // namespace

SentencePieceTokenizer::SentencePieceTokenizer() : processor_(std::make_unique<spm::Processor>()) {}

SentencePieceTokenizer::~SentencePieceTokenizer() = default;

absl::StatusOr<std::unique_ptr<SentencePieceTokenizer>> SentencePieceTokenizer::FromFile(
    const std::string& path) {
  ASSIGN_OR_RETURN(std::string bytes, ReadWholeFile(path, kMaxModelBytes));
  return FromSerializedProto(bytes, path);
}

absl::StatusOr<std::unique_ptr<SentencePieceTokenizer>> SentencePieceTokenizer::FromSerializedProto(
    std::string_view bytes, const std::string& source) {
  if (bytes.empty()) return absl::InvalidArgumentError(absl::StrCat(source, " is empty"));
  std::unique_ptr<SentencePieceTokenizer> tok(new SentencePieceTokenizer());
  const auto status = tok->processor_->LoadFromSerializedProto(bytes);
  if (!status.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat(source, " is not a valid SentencePiece model: ", status.message));
  }
  tok->model_bytes_ = std::string(bytes);
  struct Named {
    const char* name;
    int32_t* id;
  };
  const Named specials[] = {{"[PAD]", &tok->special_.pad},
                            {"[UNK]", &tok->special_.unk},
                            {"[CLS]", &tok->special_.cls},
                            {"[SEP]", &tok->special_.sep},
                            {"[MASK]", &tok->special_.mask}};
  std::vector<std::string> missing;
  for (const Named& s : specials) {
    const int id = tok->processor_->PieceToId(s.name);
    // PieceToId answers unk_id for unknown pieces: confirm by name.
    if (id < 0 || tok->processor_->IdToPiece(id) != s.name) {
      missing.push_back(s.name);
    } else {
      *s.id = id;
    }
  }
  if (!missing.empty()) {
    return absl::InvalidArgumentError(absl::StrCat(
        source, ": SentencePiece model lacks the pieces ", absl::StrJoin(missing, ", "),
        " (neodb models define [PAD] [UNK] [CLS] [SEP] as pad/unk/bos/eos pieces and [MASK] "
        "as a user-defined symbol; see TrainSentencePiece)"));
  }
  if (tok->special_.unk != tok->processor_->unk_id()) {
    return absl::InvalidArgumentError(
        absl::StrCat(source, ": the piece [UNK] (id ", tok->special_.unk,
                     ") is not the model's unk piece (id ", tok->processor_->unk_id(), ")"));
  }
  return tok;
}

absl::StatusOr<std::vector<int32_t>> SentencePieceTokenizer::Tokenize(std::string_view text) const {
  RETURN_IF_ERROR(unicode::ValidateUtf8(text));
  std::vector<int> ids;
  RETURN_IF_ERROR(FromSpStatus(processor_->Encode(text, &ids), "SentencePiece encode"));
  return std::vector<int32_t>(ids.begin(), ids.end());
}

absl::StatusOr<std::vector<std::string>> SentencePieceTokenizer::TokenizeToStrings(
    std::string_view text) const {
  RETURN_IF_ERROR(unicode::ValidateUtf8(text));
  std::vector<std::string> pieces;
  RETURN_IF_ERROR(FromSpStatus(processor_->EncodePieces(text, &pieces), "SentencePiece encode"));
  return pieces;
}

absl::StatusOr<std::string> SentencePieceTokenizer::Decode(const std::vector<int32_t>& ids) const {
  const int32_t n = vocab_size();
  for (const int32_t id : ids) {
    if (id < 0 || id >= n) {
      return absl::InvalidArgumentError(absl::StrCat("token id ", id, " outside 0..", n - 1));
    }
  }
  std::string text;
  RETURN_IF_ERROR(FromSpStatus(processor_->Decode(std::vector<int>(ids.begin(), ids.end()), &text),
                               "SentencePiece decode"));
  return text;
}

int32_t SentencePieceTokenizer::vocab_size() const {
  return static_cast<int32_t>(processor_->GetPieceSize());
}

std::string SentencePieceTokenizer::IdToToken(int32_t id) const {
  if (id < 0 || id >= vocab_size()) return "";
  return processor_->IdToPiece(id);
}

absl::Status SentencePieceTokenizer::SaveTo(const std::string& dir) const {
  RETURN_IF_ERROR(WriteFileAtomically(Env::Default(), dir + "/tokenizer.model", {model_bytes_}));
  const std::string map =
      "{\n  \"pad_token\": \"[PAD]\",\n  \"unk_token\": \"[UNK]\",\n  \"cls_token\": \"[CLS]\",\n"
      "  \"sep_token\": \"[SEP]\",\n  \"mask_token\": \"[MASK]\"\n}\n";
  return WriteFileAtomically(Env::Default(), dir + "/special_tokens_map.json", {map});
}

}  // namespace neodb::encoder
