#include "engine/token_budget.h"

#include <algorithm>
#include <limits>

#include "absl/strings/str_cat.h"

namespace neodb::engine {
namespace {

constexpr size_t kPieceBytes = 4096;

// Debian's abseil has its own string_view; StrCat takes that one.
absl::string_view Sv(std::string_view s) { return absl::string_view(s.data(), s.size()); }

bool IsSpace(char c) { return c == ' ' || c == '\n' || c == '\t' || c == '\r' || c == '\f'; }

// End of the piece starting at `begin`: just after the last whitespace within
// kPieceBytes, else the last UTF-8 character boundary within kPieceBytes.
size_t PieceEnd(std::string_view text, size_t begin) {
  if (text.size() - begin <= kPieceBytes) return text.size();
  const size_t limit = begin + kPieceBytes;
  for (size_t i = limit; i > begin; --i) {
    if (IsSpace(text[i - 1])) return i;
  }
  size_t i = limit;
  // Back up over continuation bytes (10xxxxxx) to the start of a character.
  while (i > begin + 1 && (static_cast<unsigned char>(text[i]) & 0xC0) == 0x80) --i;
  return i;
}

}  // namespace

absl::StatusOr<int64_t> CountTokensUpTo(const Embedder& embedder, std::string_view prefix,
                                        std::string_view text, int64_t limit, bool* complete) {
  // CountTokens("", piece) includes [CLS]/[SEP]; the prefix is counted once
  // with them, each piece without.
  ASSIGN_OR_RETURN(int base, embedder.CountTokens(prefix, ""));
  int64_t n = base;
  size_t begin = 0;
  while (begin < text.size() && n <= limit) {
    const size_t end = PieceEnd(text, begin);
    ASSIGN_OR_RETURN(int piece, embedder.CountTokens("", text.substr(begin, end - begin)));
    n += piece - 2;
    begin = end;
  }
  if (complete) *complete = begin >= text.size();
  return n;
}

absl::Status RequestTokenBudget::OverBudget(std::string_view what) const {
  return absl::ResourceExhaustedError(
      absl::StrCat("request is over the server's budget of ", max_request_tokens_,
                   " tokens per request (chunks included; --max-request-tokens) at ", Sv(what),
                   "; split it into smaller requests or shorter texts"));
}

absl::Status RequestTokenBudget::Add(std::string_view what, std::string_view prefix,
                                     std::string_view text, encoder::Overflow overflow,
                                     std::string_view hint) {
  const int64_t max_tokens = embedder_.max_tokens();
  const bool budgeted = max_request_tokens_ > 0;
  const int64_t budget = budgeted ? max_request_tokens_ : std::numeric_limits<int64_t>::max() / 64;
  // The text's own bound first: a text that can never fit is the caller's
  // error (INVALID_ARGUMENT) whatever else the request holds.
  if (overflow == encoder::Overflow::kError &&
      static_cast<int64_t>(text.size()) > max_tokens * kMaxBytesPerToken) {
    return absl::InvalidArgumentError(absl::StrCat(
        Sv(what), " is ", text.size(), " bytes, more than the ", max_tokens * kMaxBytesPerToken,
        " bytes (", kMaxBytesPerToken, " per token of the model's maximum of ", max_tokens,
        " tokens) a text may have without chunking", Sv(hint)));
  }
  bytes_ += static_cast<int64_t>(text.size());
  if (budgeted && bytes_ > budget * kMaxBytesPerToken) return OverBudget(what);
  if (overflow == encoder::Overflow::kError) {
    bool complete = false;
    ASSIGN_OR_RETURN(int64_t n, CountTokensUpTo(embedder_, prefix, text, max_tokens, &complete));
    if (n > max_tokens) {
      return absl::InvalidArgumentError(
          absl::StrCat(Sv(what), " has ", complete ? "" : "more than ", complete ? n : max_tokens,
                       " tokens, over the model's maximum of ", max_tokens, Sv(hint)));
    }
    tokens_ += n;
    if (budgeted && tokens_ > budget) return OverBudget(what);
    return absl::OkStatus();
  }
  // Chunked: every window repeats the prefix and [CLS]/[SEP].
  ASSIGN_OR_RETURN(int64_t framing, CountTokensUpTo(embedder_, prefix, "", max_tokens));
  const int64_t window = std::max<int64_t>(1, max_tokens - framing);
  ASSIGN_OR_RETURN(int64_t n, CountTokensUpTo(embedder_, "", text, budget - tokens_ + 2));
  const int64_t body = std::max<int64_t>(0, n - 2);
  const int64_t chunks = std::max<int64_t>(1, (body + window - 1) / window);
  tokens_ += body + chunks * framing;
  if (budgeted && tokens_ > budget) return OverBudget(what);
  return absl::OkStatus();
}

}  // namespace neodb::engine
