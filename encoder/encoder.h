#pragma once
// Encoder: the public face of the encoder room. Opens a checkpoint directory
// (weights, config, tokenizer), turns texts into vectors on a backend.
//
// Thread-safety: Embed/EmbedIds serialise on an internal mutex (one forward
// pass at a time uses all compute threads); the server batches requests
// before calling in. Accessors are safe from any thread.

#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "common/status_macros.h"
#include "encoder/backend.h"
#include "encoder/checkpoint/weights.h"
#include "encoder/chunking.h"
#include "encoder/embedding.h"
#include "encoder/model.h"
#include "encoder/tokenizer/tokenizer.h"

namespace neodb::encoder {

enum class Overflow : uint8_t {
  kError,  // input over max_length tokens is INVALID_ARGUMENT (default)
  kChunk,  // split into windows of max_length-2 tokens, each framed by
           // [CLS]/[SEP]; the text's vector is the token-weighted mean of the
           // chunk vectors
};

struct EmbedOptions {
  Pooling pooling = Pooling::kMean;
  bool normalize = false;  // L2-normalise the output vectors
  Overflow overflow = Overflow::kError;
  std::string prefix;  // instruction prepended to every text (NEOBERT.md §5)
};

struct EncoderOptions {
  BackendOptions backend;
  // Upper bound on tokens in one forward pass; longer batches are split.
  int64_t max_batch_tokens = 16384;
};

class Encoder {
 public:
  // Loads <dir> (config.json, model.safetensors, tokenizer files, and the
  // sentence-transformers files when present) with the loader of the
  // architecture config.json names, and builds the backend options.backend
  // asks for. Defined in encoder_open.cc.
  static absl::StatusOr<std::unique_ptr<Encoder>> Open(const std::string& dir,
                                                       const EncoderOptions& options = {});
  // An encoder over a model and a tokenizer already in memory (tests, tools
  // that build models in code). INVALID_ARGUMENT when the tokenizer's
  // vocabulary is larger than the model's or options are out of range.
  static absl::StatusOr<std::unique_ptr<Encoder>> Create(
      std::shared_ptr<const Model> model, std::unique_ptr<Tokenizer> tokenizer,
      const EncoderOptions& options = {}, ModelDefaults defaults = {});
  // The same over NeoBERT weights.
  static absl::StatusOr<std::unique_ptr<Encoder>> Create(
      std::shared_ptr<const NeoBertWeights> weights, std::unique_ptr<Tokenizer> tokenizer,
      const EncoderOptions& options = {});

  // Vectors for `texts`, in order. Each text becomes [CLS] prefix text [SEP]
  // (the prefix's tokens are repeated in every chunk, so windows hold
  // max_length − 2 − |prefix| text tokens). An error names the text's index.
  // An empty `texts` gives an empty result.

  absl::StatusOr<std::vector<Embedding>> Embed(const std::vector<std::string>& texts,
                                               const EmbedOptions& options);
  // The first half of Embed: tokenizes and frames `texts` (chunking per
  // options.overflow), with Embed's errors. Embed(texts, o) equals
  // CombineChunks(framed, EmbedIds(framed.sequences, o.pooling, false), …).
  // Takes no lock: callers may frame on their own threads while a forward
  // pass runs.
  absl::StatusOr<FramedTexts> Frame(const std::vector<std::string>& texts,
                                    const EmbedOptions& options) const;
  // Pre-tokenised sequences, each already framed by [CLS]/[SEP]: F32 [B, C].
  // INVALID_ARGUMENT (naming the sequence) for an empty sequence, one over
  // max_length, or an id outside [0, vocab_size).
  absl::StatusOr<Tensor> EmbedIds(const std::vector<std::vector<int32_t>>& sequences,
                                  Pooling pooling, bool normalize);

  const Model& model() const { return *model_; }
  Architecture architecture() const { return model_->architecture(); }
  int64_t dim() const { return model_->hidden_size(); }
  int64_t vocab_size() const { return model_->vocab_size(); }
  // Tokens one framed sequence may hold, [CLS] and [SEP] included: the
  // model's limit, or the shorter one its directory was published for
  // (ModelDefaults::max_length). Longer texts are refused or chunked to it.
  int64_t max_length() const { return max_length_; }
  const std::string& model_id() const { return model_->model_id(); }
  // The pooling, normalisation and prefixes the model directory asks for.
  const ModelDefaults& defaults() const { return defaults_; }
  const Tokenizer& tokenizer() const { return *tokenizer_; }
  Device device() const { return backend_->device(); }
  // The CUDA device's index (options.backend.device_index); 0 on the CPU.
  int device_index() const {
    return device() == Device::kCuda ? options_.backend.device_index : 0;
  }
  // The CPU matmul precision in effect: options.backend.precision, or kF32
  // when the CPU lacks its instructions (then precision_note() says so, else
  // it is empty). kF32 on CUDA, where compute_dtype governs.
  Precision precision() const { return precision_; }
  const std::string& precision_note() const { return precision_note_; }

 private:
  Encoder() = default;
  // Pooled, unnormalised vectors of framed sequences, in input order: sorts
  // by length and packs forward passes of at most max_batch_tokens tokens.
  // REQUIRES: mu_ held; sequences validated.
  absl::StatusOr<Tensor> RunSequences(const std::vector<std::vector<int32_t>>& sequences,
                                      Pooling pooling);
  std::shared_ptr<const Model> model_;
  ModelDefaults defaults_;
  int64_t max_length_ = 0;
  std::unique_ptr<Tokenizer> tokenizer_;
  std::unique_ptr<Backend> backend_;
  EncoderOptions options_;
  Precision precision_ = Precision::kF32;
  std::string precision_note_;
  std::mutex mu_;
};

}  // namespace neodb::encoder
