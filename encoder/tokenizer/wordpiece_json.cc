#include "encoder/tokenizer/wordpiece_json.h"

#include <limits>
#include <nlohmann/json.hpp>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"

namespace neodb::encoder {
namespace {

using Json = nlohmann::json;

absl::StatusOr<Json> ParseJson(std::string_view contents, const std::string& source) {
  Json j = Json::parse(contents.begin(), contents.end(), /*cb=*/nullptr,
                       /*allow_exceptions=*/false);
  if (j.is_discarded())
    return absl::InvalidArgumentError(absl::StrCat(source, " is not valid JSON"));
  if (!j.is_object()) {
    return absl::InvalidArgumentError(absl::StrCat(source, " is not a JSON object"));
  }
  return j;
}

// Reads an optional bool field (null counts as absent).
absl::Status OptionalBool(const Json& obj, const char* key, const std::string& source,
                          std::optional<bool>* out) {
  const auto it = obj.find(key);
  if (it == obj.end() || it->is_null()) return absl::OkStatus();
  if (!it->is_boolean()) {
    return absl::InvalidArgumentError(absl::StrCat(source, ": \"", key, "\" must be a boolean"));
  }
  *out = it->get<bool>();
  return absl::OkStatus();
}

absl::Status OptionalPositiveInt(const Json& obj, const char* key, const std::string& source,
                                 std::optional<int>* out) {
  const auto it = obj.find(key);
  if (it == obj.end() || it->is_null()) return absl::OkStatus();
  if (!it->is_number_integer() || it->get<int64_t>() < 1 ||
      it->get<int64_t>() > std::numeric_limits<int>::max()) {
    return absl::InvalidArgumentError(
        absl::StrCat(source, ": \"", key, "\" must be a positive integer"));
  }
  *out = static_cast<int>(it->get<int64_t>());
  return absl::OkStatus();
}

// Finds the BertNormalizer in `normalizer` (itself or inside a Sequence).
const Json* FindBertNormalizer(const Json& normalizer) {
  if (!normalizer.is_object()) return nullptr;
  const auto type = normalizer.find("type");
  if (type == normalizer.end() || !type->is_string()) return nullptr;
  if (*type == "BertNormalizer") return &normalizer;
  if (*type == "Sequence") {
    const auto list = normalizer.find("normalizers");
    if (list == normalizer.end() || !list->is_array()) return nullptr;
    for (const Json& n : *list) {
      if (const Json* found = FindBertNormalizer(n)) return found;
    }
  }
  return nullptr;
}

}  // namespace

void TokenizerConfigOverrides::ApplyTo(WordPieceOptions* options) const {
  if (do_lower_case) options->lower_case = *do_lower_case;
  if (strip_accents) options->strip_accents = *strip_accents;
  if (tokenize_chinese_chars) options->tokenize_chinese_chars = *tokenize_chinese_chars;
  if (max_input_chars_per_word) options->max_input_chars_per_word = *max_input_chars_per_word;
}

absl::StatusOr<TokenizerConfigOverrides> ParseTokenizerConfig(std::string_view contents,
                                                              const std::string& source) {
  ASSIGN_OR_RETURN(Json j, ParseJson(contents, source));
  TokenizerConfigOverrides o;
  RETURN_IF_ERROR(OptionalBool(j, "do_lower_case", source, &o.do_lower_case));
  RETURN_IF_ERROR(OptionalBool(j, "strip_accents", source, &o.strip_accents));
  RETURN_IF_ERROR(OptionalBool(j, "tokenize_chinese_chars", source, &o.tokenize_chinese_chars));
  RETURN_IF_ERROR(
      OptionalPositiveInt(j, "max_input_chars_per_word", source, &o.max_input_chars_per_word));
  return o;
}

absl::StatusOr<std::unique_ptr<WordPieceTokenizer>> WordPieceFromTokenizerJson(
    std::string_view contents, const TokenizerConfigOverrides& overrides,
    const std::string& source) {
  ASSIGN_OR_RETURN(Json j, ParseJson(contents, source));
  const auto model = j.find("model");
  if (model == j.end() || !model->is_object()) {
    return absl::InvalidArgumentError(absl::StrCat(source, " has no \"model\" object"));
  }
  const auto type = model->find("type");
  if (type == model->end() || !type->is_string() || *type != "WordPiece") {
    return absl::InvalidArgumentError(absl::StrCat(source, ": model.type is ",
                                                   type == model->end() ? "absent" : type->dump(),
                                                   ", expected \"WordPiece\""));
  }
  if (const auto p = model->find("continuing_subword_prefix");
      p != model->end() && !p->is_null() && (!p->is_string() || *p != "##")) {
    return absl::InvalidArgumentError(absl::StrCat(source, ": model.continuing_subword_prefix is ",
                                                   p->dump(), ", only \"##\" is supported"));
  }
  if (const auto u = model->find("unk_token");
      u != model->end() && !u->is_null() && (!u->is_string() || *u != "[UNK]")) {
    return absl::InvalidArgumentError(
        absl::StrCat(source, ": model.unk_token is ", u->dump(), ", only \"[UNK]\" is supported"));
  }
  WordPieceOptions options;
  std::optional<int> max_chars;
  RETURN_IF_ERROR(OptionalPositiveInt(*model, "max_input_chars_per_word", source, &max_chars));
  if (max_chars) options.max_input_chars_per_word = *max_chars;
  if (const auto n = j.find("normalizer"); n != j.end()) {
    if (const Json* bert = FindBertNormalizer(*n)) {
      std::optional<bool> lower, strip, chinese;
      RETURN_IF_ERROR(OptionalBool(*bert, "lowercase", source, &lower));
      RETURN_IF_ERROR(OptionalBool(*bert, "strip_accents", source, &strip));
      RETURN_IF_ERROR(OptionalBool(*bert, "handle_chinese_chars", source, &chinese));
      if (lower) options.lower_case = *lower;
      if (strip) options.strip_accents = *strip;
      if (chinese) options.tokenize_chinese_chars = *chinese;
    }
  }
  overrides.ApplyTo(&options);

  const auto vocab = model->find("vocab");
  if (vocab == model->end() || !vocab->is_object()) {
    return absl::InvalidArgumentError(absl::StrCat(source, ": model.vocab is not an object"));
  }
  if (vocab->empty())
    return absl::InvalidArgumentError(absl::StrCat(source, ": model.vocab is empty"));
  const size_t n = vocab->size();
  std::vector<std::string> tokens(n);
  std::vector<bool> seen(n, false);
  for (const auto& [token, id_json] : vocab->items()) {
    if (!id_json.is_number_integer()) {
      return absl::InvalidArgumentError(
          absl::StrCat(source, ": id of token \"", token, "\" is not an integer"));
    }
    const int64_t id = id_json.get<int64_t>();
    if (id < 0 || static_cast<uint64_t>(id) >= n) {
      return absl::InvalidArgumentError(absl::StrCat(source, ": token \"", token, "\" has id ", id,
                                                     ", outside 0..", n - 1,
                                                     " (ids must be dense)"));
    }
    if (seen[static_cast<size_t>(id)]) {
      return absl::InvalidArgumentError(
          absl::StrCat(source, ": id ", id, " is used by two tokens"));
    }
    seen[static_cast<size_t>(id)] = true;
    tokens[static_cast<size_t>(id)] = token;
  }
  auto tok = WordPieceTokenizer::Create(std::move(tokens), options);
  if (!tok.ok()) {
    return absl::Status(tok.status().code(), absl::StrCat(source, ": ", tok.status().message()));
  }
  return tok;
}

}  // namespace neodb::encoder
