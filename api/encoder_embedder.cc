#include "api/encoder_embedder.h"

namespace neodb::api {

absl::StatusOr<std::unique_ptr<Embedder>> EncoderEmbedder::Open(
    const std::string& dir, const encoder::EncoderOptions& options) {
  ASSIGN_OR_RETURN(std::unique_ptr<encoder::Encoder> enc, encoder::Encoder::Open(dir, options));
  return std::unique_ptr<Embedder>(new EncoderEmbedder(std::move(enc)));
}

absl::StatusOr<int> EncoderEmbedder::CountTokens(std::string_view prefix,
                                                 std::string_view text) const {
  // Pre-tokenisation splits on whitespace, so the prefix's tokens and the
  // text's add up (the encoder prepends the prefix to the text).
  size_t n = 2;  // [CLS], [SEP]
  if (!prefix.empty()) {
    ASSIGN_OR_RETURN(std::vector<int32_t> p, encoder_->tokenizer().Tokenize(prefix));
    n += p.size();
  }
  ASSIGN_OR_RETURN(std::vector<int32_t> t, encoder_->tokenizer().Tokenize(text));
  n += t.size();
  return static_cast<int>(n);
}

}  // namespace neodb::api
