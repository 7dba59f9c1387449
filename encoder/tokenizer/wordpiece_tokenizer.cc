#include "encoder/tokenizer/wordpiece_tokenizer.h"

#include <algorithm>
#include <fstream>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/atomic_file.h"
#include "encoder/core/file_util.h"
#include "encoder/tokenizer/unicode_util.h"

namespace neodb::encoder {

absl::StatusOr<std::unique_ptr<WordPieceTokenizer>> WordPieceTokenizer::Create(
    std::vector<std::string> tokens, const WordPieceOptions& options) {
  if (tokens.empty()) return absl::InvalidArgumentError("WordPiece vocabulary is empty");
  if (tokens.size() > static_cast<size_t>(INT32_MAX)) {
    return absl::InvalidArgumentError("WordPiece vocabulary has more than 2^31-1 tokens");
  }
  if (options.max_input_chars_per_word < 1) {
    return absl::InvalidArgumentError(absl::StrCat("max_input_chars_per_word must be >= 1, got ",
                                                   options.max_input_chars_per_word));
  }
  BertNormalizeOptions normalize;
  normalize.lower_case = options.lower_case;
  normalize.strip_accents = options.strip_accents.value_or(options.lower_case);
  normalize.tokenize_chinese_chars = options.tokenize_chinese_chars;
  // Not make_unique: the constructor is private.
  std::unique_ptr<WordPieceTokenizer> tok(
      new WordPieceTokenizer(std::move(tokens), options, normalize));
  auto& t = *tok;
  t.word_start_.reserve(t.tokens_.size());
  for (size_t i = 0; i < t.tokens_.size(); ++i) {
    const std::string& token = t.tokens_[i];
    if (token.empty()) {
      return absl::InvalidArgumentError(absl::StrCat("WordPiece token ", i, " is empty"));
    }
    if (absl::Status s = unicode::ValidateUtf8(token); !s.ok()) {
      return absl::InvalidArgumentError(absl::StrCat("WordPiece token ", i, ": ", s.message()));
    }
    const auto [it, inserted] = t.word_start_.emplace(token, static_cast<int32_t>(i));
    if (!inserted) {
      return absl::InvalidArgumentError(absl::StrCat(
          "WordPiece token \"", token, "\" appears twice (ids ", it->second, " and ", i, ")"));
    }
    t.max_start_bytes_ = std::max(t.max_start_bytes_, token.size());
    if (token.size() > 2 && token.compare(0, 2, "##") == 0) {
      t.continuation_.emplace(token.substr(2), static_cast<int32_t>(i));
      t.max_continuation_bytes_ = std::max(t.max_continuation_bytes_, token.size() - 2);
    }
  }
  struct Named {
    const char* name;
    int32_t* id;
  };
  const Named specials[] = {{"[PAD]", &t.special_.pad},
                            {"[UNK]", &t.special_.unk},
                            {"[CLS]", &t.special_.cls},
                            {"[SEP]", &t.special_.sep},
                            {"[MASK]", &t.special_.mask}};
  std::vector<std::string> missing;
  for (const Named& s : specials) {
    auto it = t.word_start_.find(absl::string_view(s.name));
    if (it == t.word_start_.end()) {
      missing.push_back(s.name);
    } else {
      *s.id = it->second;
      t.special_strings_.emplace_back(s.name, it->second);
    }
  }
  if (!missing.empty()) {
    return absl::InvalidArgumentError(absl::StrCat("WordPiece vocabulary lacks the special tokens ",
                                                   absl::StrJoin(missing, ", ")));
  }
  return tok;
}

absl::StatusOr<std::unique_ptr<WordPieceTokenizer>> WordPieceTokenizer::FromVocabText(
    std::string_view contents, const WordPieceOptions& options, const std::string& source) {
  if (contents.empty()) return absl::InvalidArgumentError(absl::StrCat(source, " is empty"));
  std::vector<std::string> tokens;
  size_t pos = 0;
  size_t line = 1;
  while (pos < contents.size()) {
    size_t end = contents.find('\n', pos);
    const bool last = end == std::string_view::npos;
    if (last) end = contents.size();
    std::string_view token = contents.substr(pos, end - pos);
    if (!token.empty() && token.back() == '\r') token.remove_suffix(1);
    if (token.empty()) {
      return absl::InvalidArgumentError(absl::StrCat(source, ": line ", line, " is empty"));
    }
    if (token.find('\r') != std::string_view::npos) {
      return absl::InvalidArgumentError(
          absl::StrCat(source, ": line ", line, " contains a carriage return"));
    }
    tokens.emplace_back(token);
    pos = last ? contents.size() : end + 1;
    ++line;
  }
  auto tok = Create(std::move(tokens), options);
  if (!tok.ok()) {
    return absl::Status(tok.status().code(), absl::StrCat(source, ": ", tok.status().message()));
  }
  return tok;
}

WordPieceTokenizer::WordPieceTokenizer(std::vector<std::string> tokens,
                                       const WordPieceOptions& options,
                                       const BertNormalizeOptions& normalize)
    : tokens_(std::move(tokens)), options_(options), pre_tokenizer_(normalize) {}

std::string WordPieceTokenizer::IdToToken(int32_t id) const {
  if (id < 0 || static_cast<size_t>(id) >= tokens_.size()) return "";
  return tokens_[static_cast<size_t>(id)];
}

void WordPieceTokenizer::AppendWordPieces(std::string_view word, std::vector<int32_t>* ids) const {
  if (unicode::CountCodePoints(word) > static_cast<size_t>(options_.max_input_chars_per_word)) {
    ids->push_back(special_.unk);
    return;
  }
  const size_t mark = ids->size();
  auto is_continuation_byte = [&](size_t i) {
    return i < word.size() && (static_cast<unsigned char>(word[i]) & 0xC0) == 0x80;
  };
  size_t start = 0;
  while (start < word.size()) {
    const bool first = start == 0;
    const auto& map = first ? word_start_ : continuation_;
    size_t end =
        std::min(word.size(), start + (first ? max_start_bytes_ : max_continuation_bytes_));
    while (end > start && is_continuation_byte(end)) --end;
    int32_t found = -1;
    while (end > start) {
      const auto it = map.find(absl::string_view(word.data() + start, end - start));
      if (it != map.end()) {
        found = it->second;
        break;
      }
      do {
        --end;
      } while (end > start && is_continuation_byte(end));
    }
    if (found < 0) {
      ids->resize(mark);
      ids->push_back(special_.unk);
      return;
    }
    ids->push_back(found);
    start = end;
  }
}

void WordPieceTokenizer::TokenizeSegment(std::string_view segment,
                                         BertPreTokenizer::Scratch* scratch,
                                         std::vector<int32_t>* ids) const {
  if (segment.empty()) return;
  pre_tokenizer_.Split(segment, scratch,
                       [&](std::string_view word) { AppendWordPieces(word, ids); });
}

absl::StatusOr<std::vector<int32_t>> WordPieceTokenizer::Tokenize(std::string_view text) const {
  RETURN_IF_ERROR(unicode::ValidateUtf8(text));
  std::vector<int32_t> ids;
  ids.reserve(text.size() / 4 + 4);
  BertPreTokenizer::Scratch scratch;
  if (!options_.match_special_tokens) {
    TokenizeSegment(text, &scratch, &ids);
    return ids;
  }
  // HF splits the raw text on added/special tokens first (leftmost match; no
  // special token is a prefix of another) and tokenizes the pieces apart.
  size_t segment_start = 0;
  size_t pos = text.find('[');
  while (pos != std::string_view::npos) {
    const std::string_view rest = text.substr(pos);
    bool matched = false;
    for (const auto& [str, id] : special_strings_) {
      if (rest.substr(0, str.size()) == str) {
        TokenizeSegment(text.substr(segment_start, pos - segment_start), &scratch, &ids);
        ids.push_back(id);
        segment_start = pos + str.size();
        matched = true;
        break;
      }
    }
    pos = text.find('[', matched ? segment_start : pos + 1);
  }
  TokenizeSegment(text.substr(segment_start), &scratch, &ids);
  return ids;
}

absl::StatusOr<std::vector<std::string>> WordPieceTokenizer::PreTokenize(
    std::string_view text) const {
  RETURN_IF_ERROR(unicode::ValidateUtf8(text));
  std::vector<std::string> words;
  BertPreTokenizer::Scratch scratch;
  pre_tokenizer_.Split(text, &scratch, [&](std::string_view w) { words.emplace_back(w); });
  return words;
}

absl::StatusOr<std::vector<std::string>> WordPieceTokenizer::TokenizeToStrings(
    std::string_view text) const {
  ASSIGN_OR_RETURN(std::vector<int32_t> ids, Tokenize(text));
  std::vector<std::string> out;
  out.reserve(ids.size());
  for (const int32_t id : ids) out.push_back(IdToToken(id));
  return out;
}

absl::Status WordPieceTokenizer::SaveTo(const std::string& dir) const {
  std::string vocab;
  for (const std::string& t : tokens_) absl::StrAppend(&vocab, t, "\n");
  RETURN_IF_ERROR(WriteFileAtomically(Env::Default(), dir + "/vocab.txt", {vocab}));
  const bool strip = options_.strip_accents.value_or(options_.lower_case);
  const std::string config = absl::StrCat(
      "{\n  \"tokenizer_class\": \"BertTokenizer\",\n  \"do_lower_case\": ",
      options_.lower_case ? "true" : "false", ",\n  \"strip_accents\": ",
      options_.strip_accents.has_value() ? (strip ? "true" : "false") : "null",
      ",\n  \"tokenize_chinese_chars\": ", options_.tokenize_chinese_chars ? "true" : "false",
      ",\n  \"max_input_chars_per_word\": ", options_.max_input_chars_per_word, "\n}\n");
  return WriteFileAtomically(Env::Default(), dir + "/tokenizer_config.json", {config});
}

}  // namespace neodb::encoder
