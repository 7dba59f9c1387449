#pragma once
// Admission checks on text length, done before a request is queued for the
// encoder, cheaply enough that hostile input cannot turn them into the
// attack: bytes first (no tokenizing at all), then a tokenizer count that
// stops as soon as the limit is passed.
//
// Two limits. A collection (or Embed call) with overflow=error takes texts
// of at most the model's max_tokens; longer is INVALID_ARGUMENT, and a text
// over max_tokens × kMaxBytesPerToken bytes is refused on its size alone.
// Every request, chunked texts included, may hold at most
// `max_request_tokens` tokens (prefix and [CLS]/[SEP] of every chunk
// counted); more is RESOURCE_EXHAUSTED, also refused on bytes first
// (more than max_request_tokens × kMaxBytesPerToken bytes of text).

#include <cstdint>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "engine/embedder.h"

namespace neodb::engine {

// Bytes of text allowed per token before a text is refused without being
// tokenized. English runs ~4-6 bytes per WordPiece token; 32 leaves room for
// whitespace-heavy or unusual text while bounding what one token may cost.
inline constexpr int64_t kMaxBytesPerToken = 32;

// Default of DatabaseOptions::max_request_tokens: 64 windows of 4096, a few
// seconds to a minute of encoder time depending on the device.
inline constexpr int64_t kDefaultMaxRequestTokens = 262144;

// Tokens `text` becomes with `prefix` and [CLS]/[SEP] (one window's worth,
// as Embedder::CountTokens), but tokenizing at most about `limit` tokens of
// it: the text is counted in pieces cut at whitespace (about 4 KiB each;
// a run of 4 KiB without whitespace is cut at a character boundary), and
// counting stops once the sum passes `limit`, returning that partial sum
// (> limit); *complete (optional) says whether the whole text was counted.
// Pieces cut at whitespace add up exactly for whitespace-splitting
// tokenizers (WordPiece; SentencePiece to within a token per piece).
absl::StatusOr<int64_t> CountTokensUpTo(const Embedder& embedder, std::string_view prefix,
                                        std::string_view text, int64_t limit,
                                        bool* complete = nullptr);

// Admits the texts of one request, one at a time. Not thread-safe; one per
// request.
class RequestTokenBudget {
 public:
  // `max_request_tokens` < 1 means no per-request budget.
  RequestTokenBudget(const Embedder& embedder, int64_t max_request_tokens)
      : embedder_(embedder), max_request_tokens_(max_request_tokens) {}

  // Checks one text as described at the top of this file. `what` names the
  // text in messages ("document 'a': text"); `hint` is appended to the
  // over-max_tokens message (how to get long texts accepted).
  absl::Status Add(std::string_view what, std::string_view prefix, std::string_view text,
                   encoder::Overflow overflow, std::string_view hint = "");

  // Tokens admitted so far (an estimate for chunked texts).
  int64_t tokens() const { return tokens_; }

 private:
  absl::Status OverBudget(std::string_view what) const;

  const Embedder& embedder_;
  const int64_t max_request_tokens_;
  int64_t tokens_ = 0;
  int64_t bytes_ = 0;
};

}  // namespace neodb::engine
