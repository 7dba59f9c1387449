#include "encoder/encoder.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <numeric>
#include <string>

#include "encoder/chunking.h"
#include "encoder/ops/cpu_kernels.h"

namespace neodb::encoder {
absl::StatusOr<std::unique_ptr<Encoder>> Encoder::Create(
    std::shared_ptr<const NeoBertWeights> weights, std::unique_ptr<Tokenizer> tokenizer,
    const EncoderOptions& options) {
  if (weights == nullptr) return absl::InvalidArgumentError("encoder needs weights");
  return Create(MakeNeoBertModel(std::move(weights)), std::move(tokenizer), options);
}

absl::StatusOr<std::unique_ptr<Encoder>> Encoder::Create(std::shared_ptr<const Model> model,
                                                         std::unique_ptr<Tokenizer> tokenizer,
                                                         const EncoderOptions& options,
                                                         ModelDefaults defaults) {
  if (model == nullptr || tokenizer == nullptr) {
    return absl::InvalidArgumentError("encoder needs a model and a tokenizer");
  }
  if (options.max_batch_tokens < 1) {
    return absl::InvalidArgumentError("max_batch_tokens must be at least 1");
  }
  if (tokenizer->vocab_size() > model->vocab_size()) {
    return absl::InvalidArgumentError("tokenizer has " + std::to_string(tokenizer->vocab_size()) +
                                      " tokens but the model's vocab_size is " +
                                      std::to_string(model->vocab_size()));
  }
  if (model->max_length() < 3) {
    return absl::InvalidArgumentError("max_length must be at least 3 to hold [CLS] x [SEP]");
  }
  auto encoder = std::unique_ptr<Encoder>(new Encoder());
  // Reduced precision without the instructions: F32 and a note, not an
  // error (the vectors are still right, only slower to compute). An explicit
  // CUDA request that cannot be met is the caller's error to see
  // (UNAVAILABLE without a device or in a CPU-only build); falling back to
  // the CPU is the caller's decision.
  if (options.backend.device == Device::kCpu) {
    encoder->precision_ = CpuPrecisionFor(options.backend.precision, &encoder->precision_note_);
  }
  ASSIGN_OR_RETURN(encoder->backend_, model->MakeBackend(options.backend, encoder->precision_));
  encoder->max_length_ = defaults.max_length > 0
                            ? std::min(defaults.max_length, model->max_length())
                            : model->max_length();
  encoder->model_ = std::move(model);
  encoder->defaults_ = std::move(defaults);
  encoder->tokenizer_ = std::move(tokenizer);
  encoder->options_ = options;
  return encoder;
}

absl::StatusOr<Tensor> Encoder::RunSequences(const std::vector<std::vector<int32_t>>& sequences,
                                             Pooling pooling) {
  const int64_t dim = model_->hidden_size();
  const int64_t count = static_cast<int64_t>(sequences.size());
  Tensor out = Tensor::Empty({count, dim}, DType::kF32);
  // Longest first: similar lengths share a pass, and the first pass sizes
  // the backend's scratch once.
  std::vector<int64_t> order(count);
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(),
                   [&](int64_t a, int64_t b) { return sequences[a].size() > sequences[b].size(); });
  size_t next = 0;
  while (next < order.size()) {
    PackedBatch batch;
    std::vector<int64_t> members;
    while (next < order.size()) {
      const auto& seq = sequences[order[next]];
      if (!members.empty() &&
          batch.total_tokens() + static_cast<int64_t>(seq.size()) > options_.max_batch_tokens) {
        break;
      }
      batch.Add(seq);
      members.push_back(order[next]);
      ++next;
    }
    ASSIGN_OR_RETURN(Tensor pooled, backend_->Pool(batch, pooling));
    for (size_t i = 0; i < members.size(); ++i) {
      std::memcpy(out.data<float>() + members[i] * dim, pooled.data<float>() + i * dim,
                  static_cast<size_t>(dim) * sizeof(float));
    }
  }
  return out;
}

absl::StatusOr<FramedTexts> Encoder::Frame(const std::vector<std::string>& texts,
                                           const EmbedOptions& options) const {
  const int64_t max_length = max_length_;
  const int64_t vocab_size = model_->vocab_size();
  const SpecialTokens& special = tokenizer_->special();
  std::vector<int32_t> prefix;
  if (!options.prefix.empty()) {
    auto ids = tokenizer_->Tokenize(options.prefix);
    if (!ids.ok()) {
      return absl::InvalidArgumentError("prefix: " + std::string(ids.status().message()));
    }
    prefix = *std::move(ids);
  }
  const int64_t window = max_length - 2 - static_cast<int64_t>(prefix.size());
  if (window < 1) {
    return absl::InvalidArgumentError("prefix has " + std::to_string(prefix.size()) +
                                      " tokens, leaving no room for text under max_length " +
                                      std::to_string(max_length));
  }

  // Frame every text (or chunk) as one sequence; remember which text owns it.
  FramedTexts framed;
  std::vector<std::vector<int32_t>>& sequences = framed.sequences;
  framed.first_sequence.assign(texts.size() + 1, 0);
  for (size_t i = 0; i < texts.size(); ++i) {
    auto ids = tokenizer_->Tokenize(texts[i]);
    if (!ids.ok()) {
      return absl::InvalidArgumentError("text " + std::to_string(i) + ": " +
                                        std::string(ids.status().message()));
    }
    const int64_t n = static_cast<int64_t>(ids->size());
    if (n > window && options.overflow == Overflow::kError) {
      return absl::InvalidArgumentError(
          "text " + std::to_string(i) + " has " + std::to_string(n + 2 + prefix.size()) +
          " tokens with [CLS]/[SEP]" + (prefix.empty() ? "" : " and the prefix") +
          ", over max_length " + std::to_string(max_length) +
          " (shorten it or enable chunking)");
    }
    framed.first_sequence[i] = static_cast<int64_t>(sequences.size());
    int64_t begin = 0;
    do {
      const int64_t end = std::min(n, begin + window);
      std::vector<int32_t> seq;
      seq.reserve(end - begin + prefix.size() + 2);
      seq.push_back(special.cls);
      seq.insert(seq.end(), prefix.begin(), prefix.end());
      seq.insert(seq.end(), ids->begin() + begin, ids->begin() + end);
      seq.push_back(special.sep);
      sequences.push_back(std::move(seq));
      begin = end;
    } while (begin < n);
    framed.first_sequence[i + 1] = static_cast<int64_t>(sequences.size());
  }
  for (const auto& seq : sequences) {
    for (int32_t id : seq) {
      if (id < 0 || id >= vocab_size) {
        return absl::InternalError("tokenizer produced id " + std::to_string(id) +
                                   " outside the model's vocabulary");
      }
    }
  }
  return framed;
}

absl::StatusOr<std::vector<Embedding>> Encoder::Embed(const std::vector<std::string>& texts,
                                                      const EmbedOptions& options) {
  ASSIGN_OR_RETURN(FramedTexts framed, Frame(texts, options));
  std::lock_guard<std::mutex> lock(mu_);
  ASSIGN_OR_RETURN(Tensor pooled, RunSequences(framed.sequences, options.pooling));
  return CombineChunks(framed, pooled.data<float>(), model_->hidden_size(),
                       options.normalize);
}

absl::StatusOr<Tensor> Encoder::EmbedIds(const std::vector<std::vector<int32_t>>& sequences,
                                         Pooling pooling, bool normalize) {
  const int64_t max_length = model_->max_length();
  const int64_t vocab_size = model_->vocab_size();
  for (size_t i = 0; i < sequences.size(); ++i) {
    const auto& seq = sequences[i];
    if (seq.empty() || static_cast<int64_t>(seq.size()) > max_length) {
      return absl::InvalidArgumentError("sequence " + std::to_string(i) + " has " +
                                        std::to_string(seq.size()) + " tokens; must be in [1, " +
                                        std::to_string(max_length) + "] (max_length)");
    }
    for (size_t j = 0; j < seq.size(); ++j) {
      if (seq[j] < 0 || seq[j] >= vocab_size) {
        return absl::InvalidArgumentError(
            "sequence " + std::to_string(i) + " position " + std::to_string(j) + ": id " +
            std::to_string(seq[j]) + " is outside [0, " + std::to_string(vocab_size) + ")");
      }
    }
  }
  std::lock_guard<std::mutex> lock(mu_);
  ASSIGN_OR_RETURN(Tensor out, RunSequences(sequences, pooling));
  if (normalize) {
    for (int64_t b = 0; b < out.dim(0); ++b) {
      NormalizeRow(out.data<float>() + b * out.dim(1), out.dim(1));
    }
  }
  return out;
}

}  // namespace neodb::encoder
