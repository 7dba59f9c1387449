#pragma once
// TrainParams: every encoder parameter in ONE flat buffer, in checkpoint
// order, for either architecture the trainer runs:
//   NeoBERT: embeddings; per layer attention_norm, qkv, wo, ffn_norm, w12,
//            w3; final norm.
//   BERT:    word, position, token_type embeddings, embedding LayerNorm w/b;
//            per layer query, key, value (weight, bias each), attention
//            output dense w/b + LayerNorm w/b, intermediate dense w/b, output
//            dense w/b + LayerNorm w/b (Hugging Face names; no final norm).
// The flat layout makes the optimiser, gradient clipping and checkpointing
// single loops, and makes "the top N layers (and NeoBERT's final norm)" a
// contiguous tail of the buffer — the trainable part when --train-layers N.
// Only train_model (which hands each architecture's description its
// tensors) and the checkpoint converters know which tensor is which;
// everything else sees entries, offsets and the layer boundaries.

#include <cstdint>
#include <string>
#include <vector>

#include "encoder/checkpoint/bert_weights.h"
#include "encoder/checkpoint/weights.h"
#include "encoder/model.h"

namespace neodb::encoder::train {

// NeoBERT's tensors of one layer, in layout order.
enum LayerTensor : int { kAttentionNorm = 0, kQkv, kWo, kFfnNorm, kW12, kW3, kLayerTensors };
// BERT's tensors of one layer, in layout order (the Hugging Face checkpoint's).
enum BertLayerTensor : int {
  kBertQ = 0, kBertQBias, kBertK, kBertKBias, kBertV, kBertVBias,
  kBertWo, kBertWoBias, kBertAttnNormW, kBertAttnNormB,
  kBertW1, kBertW1Bias, kBertW2, kBertW2Bias, kBertFfnNormW, kBertFfnNormB,
  kBertLayerTensors
};
// BERT's embedding tensors, the first entries of its layout.
enum BertEmbeddingTensor : int {
  kBertWordEmb = 0, kBertPositionEmb, kBertTypeEmb, kBertEmbNormW, kBertEmbNormB,
  kBertEmbeddingTensors
};

struct ParamEntry {
  std::string name;  // checkpoint name without the "model." / "bert." prefix
  std::vector<int64_t> shape;
  int64_t offset = 0;  // into the flat buffer
  int64_t numel = 0;
  bool is_matrix = false;  // rank 2: gets weight decay (norm weights, biases do not)
  bool is_bias = false;    // an additive bias (RandomParams draws it around 0, not 1)
};

class ParamLayout {
 public:
  explicit ParamLayout(const NeoBertConfig& config);
  explicit ParamLayout(const BertConfig& config);

  Architecture architecture() const { return architecture_; }
  int64_t hidden_size() const { return hidden_size_; }
  int64_t num_layers() const { return num_layers_; }
  // The longest sequence the model takes (NeoBERT max_length, BERT
  // max_position_embeddings).
  int64_t max_length() const { return max_length_; }
  int64_t vocab_size() const { return vocab_size_; }
  // REQUIRES (CHECKed): the architecture is NeoBERT / BERT respectively.
  const NeoBertConfig& config() const;
  const BertConfig& bert_config() const;
  const std::vector<ParamEntry>& entries() const { return entries_; }
  int64_t total() const { return total_; }

  // The (word) embedding table: the first entry of both layouts.
  const ParamEntry& embeddings() const { return entries_[0]; }
  // Entry t of layer l (t a LayerTensor for NeoBERT, a BertLayerTensor for BERT).
  const ParamEntry& layer(int64_t l, int t) const { return entries_[layer_first_[l] + t]; }
  // Offset of layer l's first tensor; l == num_layers gives the end of the
  // last layer (NeoBERT's final norm, BERT's end of buffer).
  int64_t LayerBegin(int64_t l) const;
  // REQUIRES: NeoBERT (BERT has no final norm).
  const ParamEntry& final_norm() const;

  // Offset of the first trained parameter when the top `train_layers` layers
  // (and the final norm) train. train_layers <= 0 or >= num_hidden_layers
  // trains everything, embeddings included (→ 0).
  int64_t TrainableBegin(int64_t train_layers) const;
  // The lowest layer that trains for that setting (0 when everything trains).
  int64_t FirstTrainedLayer(int64_t train_layers) const;

 private:
  void Add(std::string name, std::vector<int64_t> shape, bool is_bias = false);

  Architecture architecture_;
  NeoBertConfig config_;
  BertConfig bert_config_;
  int64_t hidden_size_ = 0, num_layers_ = 0, max_length_ = 0, vocab_size_ = 0;
  std::vector<ParamEntry> entries_;
  std::vector<size_t> layer_first_;  // index into entries_ of each layer's first tensor
  int64_t total_ = 0;
};

template <typename T>
struct TrainParams {
  explicit TrainParams(const NeoBertConfig& config) : TrainParams(ParamLayout(config)) {}
  explicit TrainParams(ParamLayout l) : layout(std::move(l)) {
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

// Deterministic random parameters for tests: matrices and biases
// uniform(±scale), norm weights uniform(1 ± norm_jitter).
template <typename T>
TrainParams<T> RandomParams(const NeoBertConfig& config, uint64_t seed, double scale,
                            double norm_jitter);
template <typename T>
TrainParams<T> RandomParams(const ParamLayout& layout, uint64_t seed, double scale,
                            double norm_jitter);

// The hidden dims no layer reads or writes: every layer's qkv and w12 column
// and wo and w3 row there is exactly 0, so the residual stream carries those
// dims from the embeddings to the final norm untouched (a pass-through
// channel, like the default model's GloVe channel). Ascending; empty when
// every dim is used, and always for BERT (its LayerNorms mix every dim).
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
