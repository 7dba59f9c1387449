#pragma once
// Embedder: the seam between the service and the encoder. The server uses
// EncoderEmbedder (encoder_embedder.h) over encoder::Encoder; tests use a
// deterministic fake. Everything above this seam (batcher, database,
// services) is tested without a model.
//
// Thread-safety: implementations must allow concurrent calls of the const
// accessors and of Frame; Embed and Pool are called from one thread at a
// time (the batcher's worker).

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "common/status_macros.h"
#include "encoder/encoder.h"

namespace neodb::engine {

class Embedder {
 public:
  virtual ~Embedder() = default;

  // Fingerprint of the weights that produce the vectors (NEOBERT.md).
  virtual const std::string& model_id() const = 0;
  virtual int dim() const = 0;
  // Longest input, in tokens with [CLS]/[SEP], that one forward pass takes.
  virtual int max_tokens() const = 0;
  // Tokens `text` becomes with `prefix` prepended, specials included. Used to
  // size batches and to reject over-long texts before queueing them.
  virtual absl::StatusOr<int> CountTokens(std::string_view prefix, std::string_view text) const = 0;
  // Memory the model holds (weights), in bytes, for the model registry's cap.
  // An estimate is fine. Default: 0 (negligible).
  virtual size_t memory_bytes() const { return 0; }
  // Where the vectors are computed: "cpu" or "cuda:N" (encoder/device.h).
  // Default: "cpu".
  virtual std::string device() const { return "cpu"; }
  // The matmul precision the vectors are computed in (Encoder::precision():
  // after any fallback of a CPU without the instructions). Default: kF32.
  virtual encoder::Precision precision() const { return encoder::Precision::kF32; }
  // The pooling and instructions the model's directory asks for (its
  // sentence-transformers files). Default: mean pooling, no instructions.
  virtual encoder::ModelDefaults defaults() const { return {}; }

  // One vector per text, in order. Errors (text too long with
  // Overflow::kError, invalid input) are INVALID_ARGUMENT.
  virtual absl::StatusOr<std::vector<encoder::Embedding>> Embed(
      const std::vector<std::string>& texts, const encoder::EmbedOptions& options) = 0;

  // Embed in two halves, so the batcher can run a long text's chunks as
  // separate work items, interleave them with other requests' and stop a
  // cancelled request between them. Frame tokenizes and frames (chunks)
  // `texts`, with Embed's errors; Pool runs sequences through the model and
  // returns their pooled, unnormalised vectors, row-major [n, dim()].
  // Embed(texts, o) == CombineChunks(Frame(texts, o), Pool(all sequences),
  // dim(), o.normalize) (encoder/chunking.h).
  virtual absl::StatusOr<encoder::FramedTexts> Frame(
      const std::vector<std::string>& texts, const encoder::EmbedOptions& options) const = 0;
  virtual absl::StatusOr<std::vector<float>> Pool(
      const std::vector<std::vector<int32_t>>& sequences, encoder::Pooling pooling) = 0;
};

}  // namespace neodb::engine
