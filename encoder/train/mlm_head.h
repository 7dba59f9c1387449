#pragma once
// Masked-language-model pieces for pre-training (NEOBERT.md §6): the masking
// rule and the MLM head (decoder Linear with bias, NOT tied to the token
// embeddings) with its mean cross-entropy loss and backward pass.
//
// Masking: every non-special token is selected independently with
// probability `rate` (20% in NeoBERT) and replaced by [MASK] — no 80/10/10
// split. The loss is the mean cross-entropy over the selected positions only.
//
// Templates are instantiated for float (training) and double (finite-
// difference gradient checks). Functions are pure apart from their outputs;
// concurrent calls with distinct outputs are safe.

#include <cstdint>
#include <span>
#include <vector>

namespace neodb::encoder::train {

struct MlmMaskOptions {
  // Probability that a maskable token is selected. Default: 0.2.
  double rate = 0.2;
  // Id written over selected tokens. REQUIRED (the tokenizer's [MASK]).
  int32_t mask_id = -1;
  // Ids never selected ([PAD], [CLS], [SEP], [MASK], [UNK]). Default: none.
  std::vector<int32_t> special_ids;
};

struct MaskedTokens {
  std::vector<int32_t> input_ids;  // the ids with selected tokens set to mask_id
  std::vector<int64_t> rows;       // selected positions (ascending)
  std::vector<int32_t> labels;     // original id at each selected position
};

// Masks `ids` (a packed batch, any framing) with a counter-based generator:
// the choice at position i depends only on (seed, i), so a batch is
// reproducible from its seed alone. When no token is selected but some are
// maskable, the first maskable token of the hash order is selected so every
// batch has a loss. REQUIRES: 0 < rate < 1, mask_id >= 0.
MaskedTokens MaskTokens(std::span<const int32_t> ids, const MlmMaskOptions& options, uint64_t seed);

// Shapes: hidden [rows, c] (the encoder's last_hidden_state, final norm
// applied); weight [vocab, c] (decoder.weight); bias [vocab] (decoder.bias).
template <typename T>
struct MlmHeadView {
  const T* weight = nullptr;
  const T* bias = nullptr;
  int64_t vocab = 0;
  int64_t c = 0;
};

struct MlmLossResult {
  double loss = 0;      // mean cross-entropy over the masked positions (nats)
  int64_t correct = 0;  // masked positions whose arg-max logit is the label
  int64_t masked = 0;   // number of masked positions
};

// Computes the loss of the masked positions `rows` with targets `labels` and,
// when the gradient pointers are non-null, ADDS the gradients of that loss:
// d_hidden [rows_total, c] (only the masked rows change), d_weight [vocab, c],
// d_bias [vocab]. Only the masked rows' logits are formed ([n, vocab] scratch).
// REQUIRES: rows.size() == labels.size() > 0; every row < rows_total and
// every label in [0, vocab).
// The gradients are those of grad_scale × loss (micro-batches of one step
// pass n_micro / n_step so that their sum is the step's mean).
template <typename T>
MlmLossResult MlmHeadLoss(const MlmHeadView<T>& head, const T* hidden, int64_t rows_total,
                          std::span<const int64_t> rows, std::span<const int32_t> labels,
                          T* d_hidden, T* d_weight, T* d_bias, T grad_scale = T(1));

}  // namespace neodb::encoder::train
