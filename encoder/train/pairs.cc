#include "encoder/train/pairs.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "encoder/train/json_lines.h"
#include "nlohmann/json.hpp"

namespace neodb::encoder::train {
namespace {

absl::StatusOr<std::string> TextField(const nlohmann::json& obj, const char* key,
                                      const std::string& name, int64_t line) {
  auto it = obj.find(key);
  if (it == obj.end()) return LineError(name, line, absl::StrCat("missing field \"", key, "\""));
  if (!it->is_string()) {
    return LineError(name, line,
                     absl::StrCat("field \"", key, "\" must be a string, got ", it->type_name()));
  }
  std::string value = it->get<std::string>();
  if (value.find_first_not_of(" \t\r\n") == std::string::npos) {
    return LineError(name, line, absl::StrCat("field \"", key, "\" is empty"));
  }
  return value;
}

}  // namespace

absl::StatusOr<std::vector<TextPair>> ParsePairs(const std::string& text, const std::string& name) {
  std::vector<TextPair> pairs;
  RETURN_IF_ERROR(ForEachJsonObjectLine(text, name, [&](const nlohmann::json& obj,
                                                        int64_t line) -> absl::Status {
    TextPair pair;
    pair.line = line;
    ASSIGN_OR_RETURN(pair.query, TextField(obj, "query", name, line));
    ASSIGN_OR_RETURN(pair.positive, TextField(obj, "positive", name, line));
    auto negs = obj.find("negatives");
    if (negs != obj.end() && !negs->is_null()) {
      if (!negs->is_array()) {
        return LineError(
            name, line,
            absl::StrCat("field \"negatives\" must be an array, got ", negs->type_name()));
      }
      for (size_t i = 0; i < negs->size(); ++i) {
        const nlohmann::json& n = (*negs)[i];
        if (!n.is_string()) {
          return LineError(
              name, line, absl::StrCat("negatives[", i, "] must be a string, got ", n.type_name()));
        }
        std::string value = n.get<std::string>();
        if (value.find_first_not_of(" \t\r\n") == std::string::npos) {
          return LineError(name, line, absl::StrCat("negatives[", i, "] is empty"));
        }
        pair.negatives.push_back(std::move(value));
      }
    }
    pairs.push_back(std::move(pair));
    return absl::OkStatus();
  }));
  if (pairs.empty()) return absl::InvalidArgumentError(absl::StrCat(name, ": no pairs"));
  return pairs;
}

absl::StatusOr<std::vector<TextPair>> ReadPairs(const std::string& path) {
  ASSIGN_OR_RETURN(const std::string text, ReadWholeFile(path, "pair file"));
  return ParsePairs(text, path);
}

absl::StatusOr<std::vector<TokenizedPair>> TokenizePairs(const std::vector<TextPair>& pairs,
                                                         const Tokenizer& tokenizer,
                                                         int64_t max_length,
                                                         const std::string& name,
                                                         bool truncate) {
  std::vector<TokenizedPair> out;
  out.reserve(pairs.size());
  auto encode = [&](const std::string& text, const TextPair& pair,
                    const std::string& field) -> absl::StatusOr<std::vector<int32_t>> {
    auto ids = tokenizer.Tokenize(text);
    if (!ids.ok()) {
      return LineError(name, pair.line, absl::StrCat(field, ": ", ids.status().message()));
    }
    if (truncate && static_cast<int64_t>(ids->size()) + 2 > max_length) {
      ids->resize(static_cast<size_t>(std::max<int64_t>(max_length - 2, 0)));
    }
    std::vector<int32_t> framed;
    framed.reserve(ids->size() + 2);
    framed.push_back(tokenizer.special().cls);
    framed.insert(framed.end(), ids->begin(), ids->end());
    framed.push_back(tokenizer.special().sep);
    if (static_cast<int64_t>(framed.size()) > max_length) {
      return LineError(
          name, pair.line,
          absl::StrCat(field, " is ", framed.size(),
                       " tokens with [CLS]/[SEP], over the maximum length ", max_length));
    }
    return framed;
  };
  for (const TextPair& pair : pairs) {
    TokenizedPair t;
    t.line = pair.line;
    ASSIGN_OR_RETURN(t.query, encode(pair.query, pair, "query"));
    ASSIGN_OR_RETURN(t.positive, encode(pair.positive, pair, "positive"));
    for (size_t i = 0; i < pair.negatives.size(); ++i) {
      ASSIGN_OR_RETURN(auto neg,
                       encode(pair.negatives[i], pair, absl::StrCat("negatives[", i, "]")));
      t.negatives.push_back(std::move(neg));
    }
    out.push_back(std::move(t));
  }
  return out;
}

}  // namespace neodb::encoder::train
