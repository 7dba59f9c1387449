#pragma once
// TrainParams: every encoder parameter in ONE flat buffer, in checkpoint
// order (embeddings; per layer attention_norm, qkv, wo, ffn_norm, w12, w3;
// final norm). The flat layout makes the optimiser, gradient clipping and
// checkpointing single loops, and makes "the top N layers and the final norm"
// a contiguous tail of the buffer — the trainable part when --train-layers N.

#include <cstdint>
#include <string>
#include <vector>

#include "encoder/checkpoint/weights.h"

namespace neodb::encoder::train {

enum LayerTensor : int { kAttentionNorm = 0, kQkv, kWo, kFfnNorm, kW12, kW3, kLayerTensors };

struct ParamEntry {
  std::string name;  // checkpoint name without the "model." prefix
  std::vector<int64_t> shape;
  int64_t offset = 0;  // into the flat buffer
  int64_t numel = 0;
  bool is_matrix = false;  // rank 2: gets weight decay (norm weights do not)
};

class ParamLayout {
 public:
  explicit ParamLayout(const NeoBertConfig& config);

  const NeoBertConfig& config() const { return config_; }
  const std::vector<ParamEntry>& entries() const { return entries_; }
  int64_t total() const { return total_; }

  const ParamEntry& embeddings() const { return entries_[0]; }
  const ParamEntry& layer(int64_t l, LayerTensor t) const {
    return entries_[1 + l * kLayerTensors + t];
  }
  const ParamEntry& final_norm() const { return entries_.back(); }

  // Offset of the first trained parameter when the top `train_layers` layers
  // (and the final norm) train. train_layers <= 0 or >= num_hidden_layers
  // trains everything, embeddings included (→ 0).
  int64_t TrainableBegin(int64_t train_layers) const;
  // The lowest layer that trains for that setting (0 when everything trains).
  int64_t FirstTrainedLayer(int64_t train_layers) const;

 private:
  NeoBertConfig config_;
  std::vector<ParamEntry> entries_;
  int64_t total_ = 0;
};

template <typename T>
struct TrainParams {
  explicit TrainParams(const NeoBertConfig& config) : layout(config) {
    values.assign(static_cast<size_t>(layout.total()), T(0));
  }
  ParamLayout layout;
  std::vector<T> values;

  T* at(const ParamEntry& e) { return values.data() + e.offset; }
  const T* at(const ParamEntry& e) const { return values.data() + e.offset; }
};

// Copies a checkpoint's encoder weights (any stored dtype) into F32 training
// parameters.
TrainParams<float> ParamsFromWeights(const NeoBertWeights& weights);

// Builds checkpoint weights from training parameters; the MLM head (decoder)
// is taken from `original` unchanged (it is not trained here, but keeping it
// lets the output load wherever the input did). model_id is recomputed (the
// weights differ from the original's).
NeoBertWeights WeightsFromParams(const TrainParams<float>& params, const NeoBertWeights& original);

// Copies between flat F32 training vectors and F32 checkpoint tensors (the
// MLM head is trained as plain vectors beside the encoder's ParamLayout).
std::vector<float> TensorToVector(const Tensor& t);  // REQUIRES: t is F32
Tensor VectorToTensor(const std::vector<float>& v, Shape shape);

// Deterministic random parameters for tests: matrices uniform(±scale), norm
// weights uniform(1 ± norm_jitter).
template <typename T>
TrainParams<T> RandomParams(const NeoBertConfig& config, uint64_t seed, double scale,
                            double norm_jitter);

// The hidden dims no layer reads or writes: every layer's qkv and w12 column
// and wo and w3 row there is exactly 0, so the residual stream carries those
// dims from the embeddings to the final norm untouched (a pass-through
// channel, like the default model's GloVe channel). Ascending; empty when
// every dim is used.
std::vector<int64_t> PassThroughDims(const TrainParams<float>& params);

// FFN width F = round_up_to_multiple_of_8(int(2 · intermediate_size / 3))
// (NEOBERT.md §2), computed here so training needs no config code beyond the
// struct.
int64_t FfnDim(const NeoBertConfig& config);

// A small, fast, seedable generator (splitmix64) whose sequence is the same
// on every machine; its whole state is one integer, so it checkpoints.
class SplitMix64 {
 public:
  explicit SplitMix64(uint64_t seed) : state_(seed) {}
  uint64_t Next();
  double Uniform();  // [0, 1)
  uint64_t state() const { return state_; }

 private:
  uint64_t state_;
};

}  // namespace neodb::encoder::train
