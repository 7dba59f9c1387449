#pragma once
// Training and evaluation pairs: JSON Lines, one object per line,
//   {"query": "...", "positive": "...", "negatives": ["...", ...]}
// with "negatives" optional. Blank lines are skipped. Every problem is an
// INVALID_ARGUMENT that names the file and the 1-based line number.

#include <cstdint>
#include <string>
#include <vector>

#include "common/status_macros.h"
#include "encoder/tokenizer/tokenizer.h"

namespace neodb::encoder::train {

struct TextPair {
  std::string query;
  std::string positive;
  std::vector<std::string> negatives;
  int64_t line = 0;  // 1-based line in the file
};

struct TokenizedPair {
  std::vector<int32_t> query;  // [CLS] … [SEP]
  std::vector<int32_t> positive;
  std::vector<std::vector<int32_t>> negatives;
  int64_t line = 0;
};

// Parses JSONL text; `name` prefixes error messages ("pairs.jsonl:12: ...").
// Rejects malformed JSON, a non-object line, a missing/non-string/empty
// "query" or "positive", a "negatives" that is not an array of non-empty
// strings, and a file with no pairs.
absl::StatusOr<std::vector<TextPair>> ParsePairs(const std::string& text, const std::string& name);
// Reads and parses a file (NOT_FOUND when it cannot be opened).
absl::StatusOr<std::vector<TextPair>> ReadPairs(const std::string& path);

// Tokenises every text and frames it with [CLS]/[SEP]; a text longer than
// max_length tokens (framing included) is an error naming the line, the
// field and both lengths — never silently truncated — unless `truncate`,
// when its first max_length - 2 tokens are kept (the caller asked for it:
// `neodb adapt` trains on whole collection documents, which may be long).
absl::StatusOr<std::vector<TokenizedPair>> TokenizePairs(const std::vector<TextPair>& pairs,
                                                         const Tokenizer& tokenizer,
                                                         int64_t max_length,
                                                         const std::string& name,
                                                         bool truncate = false);

}  // namespace neodb::encoder::train
