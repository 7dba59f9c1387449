#include "encoder/train/bert_train_model.h"

#include <algorithm>

#include "common/status_macros.h"
#include "encoder/train/attention.h"
#include "encoder/train/blas.h"
#include "encoder/train/embedding_pooling.h"
#include "encoder/train/gelu.h"
#include "encoder/train/layer_norm.h"
#include "encoder/train/layer_stack.h"
#include "encoder/train/linear.h"

namespace neodb::encoder::train {
namespace {

// part (0 = q, 1 = k, 2 = v) [rows, H·D] → its slots of the head-interleaved
// qkv [rows, 3·H·D] (head h: q, k, v at 3Dh, 3Dh + D, 3Dh + 2D).
template <typename T>
void Interleave(const T* part, int p, int64_t rows, int64_t heads, int64_t d, T* qkv) {
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t h = 0; h < heads; ++h) {
      const T* src = part + r * heads * d + h * d;
      std::copy(src, src + d, qkv + r * 3 * heads * d + 3 * d * h + p * d);
    }
  }
}

// The inverse: part p's slots of qkv → part [rows, H·D].
template <typename T>
void Deinterleave(const T* qkv, int p, int64_t rows, int64_t heads, int64_t d, T* part) {
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t h = 0; h < heads; ++h) {
      const T* src = qkv + r * 3 * heads * d + 3 * d * h + p * d;
      std::copy(src, src + d, part + r * heads * d + h * d);
    }
  }
}

// The weight and bias tensor of q, k, v in BertLayerTensor order.
constexpr int kProjWeight[3] = {kBertQ, kBertK, kBertV};
constexpr int kProjBias[3] = {kBertQBias, kBertKBias, kBertVBias};

}  // namespace

template <typename T>
BertTrainModel<T>::BertTrainModel(const ParamLayout& layout)
    : layout_(layout),
      c_(layout.bert_config().hidden_size),
      i_(layout.bert_config().intermediate_size),
      h_(layout.bert_config().num_attention_heads),
      d_(layout.bert_config().head_dim()),
      eps_(layout.bert_config().layer_norm_eps) {}

template <typename T>
void BertTrainModel<T>::LayerForward(const T* params, int64_t l, const PackedBatch& batch,
                                     const T* x, LayerActs* A, bool keep, T* x_out) const {
  const int64_t rows = batch.total_tokens();
  auto w = [&](int t) { return params + layout_.layer(l, t).offset; };
  if (keep) A->x.assign(x, x + rows * c_);
  Resize(&A->qkv, rows * 3 * c_);
  Resize(&A->o, rows * c_);
  Resize(&A->y1, rows * c_);
  Resize(&A->mean1, rows);
  Resize(&A->rstd1, rows);
  Resize(&A->x1, rows * c_);
  Resize(&A->u, rows * i_);
  Resize(&A->g, rows * i_);
  Resize(&A->y2, rows * c_);
  Resize(&A->mean2, rows);
  Resize(&A->rstd2, rows);
  if (keep) Resize(&A->lse, rows * h_);

  // The projection scratch borrows y1 (written only after attention).
  for (int p = 0; p < 3; ++p) {
    LinearForward(x, w(kProjWeight[p]), rows, c_, c_, A->y1.data());
    AddBias(w(kProjBias[p]), rows, c_, A->y1.data());
    Interleave(A->y1.data(), p, rows, h_, d_, A->qkv.data());
  }
  AttentionForward(A->qkv.data(), batch.offsets.data(), batch.batch_size(), h_, d_, A->o.data(),
                   keep ? A->lse.data() : nullptr);
  // y1 = x + o·Woᵀ + bo; x1 = LayerNorm(y1).
  std::copy(x, x + rows * c_, A->y1.data());
  Gemm<T>(false, true, rows, c_, c_, T(1), A->o.data(), c_, w(kBertWo), c_, T(1), A->y1.data(), c_);
  AddBias(w(kBertWoBias), rows, c_, A->y1.data());
  LayerNormForward(A->y1.data(), w(kBertAttnNormW), w(kBertAttnNormB), rows, c_, eps_,
                   A->x1.data(), A->mean1.data(), A->rstd1.data());
  // y2 = x1 + GELU(x1·W1ᵀ + b1)·W2ᵀ + b2; x_out = LayerNorm(y2).
  LinearForward(A->x1.data(), w(kBertW1), rows, c_, i_, A->u.data());
  AddBias(w(kBertW1Bias), rows, i_, A->u.data());
  GeluForward(A->u.data(), rows * i_, A->g.data());
  std::copy(A->x1.begin(), A->x1.begin() + rows * c_, A->y2.data());
  Gemm<T>(false, true, rows, c_, i_, T(1), A->g.data(), i_, w(kBertW2), i_, T(1), A->y2.data(), c_);
  AddBias(w(kBertW2Bias), rows, c_, A->y2.data());
  LayerNormForward(A->y2.data(), w(kBertFfnNormW), w(kBertFfnNormB), rows, c_, eps_, x_out,
                   A->mean2.data(), A->rstd2.data());
}

template <typename T>
void BertTrainModel<T>::Forward(const T* params, const PackedBatch& batch, int64_t first_layer,
                                const T* x_in, T* hidden,
                                std::unique_ptr<ArchActivations>* arch_acts,
                                int64_t boundary_layer, T* boundary_out) const {
  CheckForwardArgs(layout_, batch, first_layer, x_in, boundary_layer, boundary_out);
  Acts* acts = ReuseOrMakeActs<Acts>(arch_acts);
  const int64_t rows = batch.total_tokens();
  std::vector<T> x(static_cast<size_t>(rows * c_));
  if (first_layer == 0) {
    // e = word[ids] + position[t] + token_type[0]; x = LayerNorm(e).
    std::vector<T> local_e, local_mean, local_rstd;
    std::vector<T>& e = acts != nullptr ? acts->e : local_e;
    std::vector<T>& mean = acts != nullptr ? acts->e_mean : local_mean;
    std::vector<T>& rstd = acts != nullptr ? acts->e_rstd : local_rstd;
    Resize(&e, rows * c_);
    Resize(&mean, rows);
    Resize(&rstd, rows);
    auto emb = [&](int t) { return params + layout_.entries()[t].offset; };
    EmbeddingForward(batch.ids.data(), rows, emb(kBertWordEmb), c_, e.data());
    PositionEmbeddingForward(emb(kBertPositionEmb), batch.offsets.data(), batch.batch_size(), c_,
                             e.data());
    AddBias(emb(kBertTypeEmb), rows, c_, e.data());  // type row 0: one segment
    LayerNormForward(e.data(), emb(kBertEmbNormW), emb(kBertEmbNormB), rows, c_, eps_, x.data(),
                     mean.data(), rstd.data());
  } else {
    std::copy(x_in, x_in + rows * c_, x.begin());
  }
  RunLayerStack(first_layer, layout_.num_layers(), &x, acts, boundary_layer, boundary_out,
                [&](int64_t l, const T* in, LayerActs* a, bool keep, T* out) {
                  LayerForward(params, l, batch, in, a, keep, out);
                });
  std::copy(x.begin(), x.end(), hidden);
}

template <typename T>
void BertTrainModel<T>::BackwardFromHidden(const T* params, const PackedBatch& batch,
                                           const ArchActivations& arch_acts, const T* d_hidden,
                                           int64_t grad_begin, T* grads) const {
  const Acts& acts = static_cast<const Acts&>(arch_acts);
  const int64_t stop_layer = LowestTrainedLayer(layout_, grad_begin, acts.first_layer);
  const int64_t rows = batch.total_tokens();
  auto grad = [&](const ParamEntry& e) { return grads + (e.offset - grad_begin); };

  std::vector<T> dx(d_hidden, d_hidden + rows * c_);
  std::vector<T> dy2, dg, du, dx1, dy1, d_o, dqkv, dpart;
  for (int64_t l = layout_.num_layers() - 1; l >= stop_layer; --l) {
    const LayerActs& A = acts.layers[l - acts.first_layer];
    auto w = [&](int t) { return params + layout_.layer(l, t).offset; };
    auto g = [&](int t) { return grad(layout_.layer(l, t)); };
    // x_out = LayerNorm(y2), y2 = x1 + GELU(x1·W1ᵀ + b1)·W2ᵀ + b2.
    Zero(&dy2, rows * c_);
    LayerNormBackward(A.y2.data(), w(kBertFfnNormW), A.mean2.data(), A.rstd2.data(), dx.data(),
                      rows, c_, dy2.data(), g(kBertFfnNormW), g(kBertFfnNormB));
    BiasBackward(dy2.data(), rows, c_, g(kBertW2Bias));
    Zero(&dg, rows * i_);
    LinearBackward(A.g.data(), w(kBertW2), dy2.data(), rows, i_, c_, dg.data(), g(kBertW2));
    Resize(&du, rows * i_);
    GeluBackward(A.u.data(), dg.data(), rows * i_, du.data());
    BiasBackward(du.data(), rows, i_, g(kBertW1Bias));
    dx1 = dy2;  // the residual
    LinearBackward(A.x1.data(), w(kBertW1), du.data(), rows, c_, i_, dx1.data(), g(kBertW1));
    // x1 = LayerNorm(y1), y1 = x + Attention(q, k, v)·Woᵀ + bo.
    Zero(&dy1, rows * c_);
    LayerNormBackward(A.y1.data(), w(kBertAttnNormW), A.mean1.data(), A.rstd1.data(), dx1.data(),
                      rows, c_, dy1.data(), g(kBertAttnNormW), g(kBertAttnNormB));
    BiasBackward(dy1.data(), rows, c_, g(kBertWoBias));
    Zero(&d_o, rows * c_);
    LinearBackward(A.o.data(), w(kBertWo), dy1.data(), rows, c_, c_, d_o.data(), g(kBertWo));
    Resize(&dqkv, rows * 3 * c_);
    AttentionBackward(A.qkv.data(), A.o.data(), A.lse.data(), d_o.data(), batch.offsets.data(),
                      batch.batch_size(), h_, d_, dqkv.data());
    dx = dy1;  // the residual
    Resize(&dpart, rows * c_);
    for (int p = 0; p < 3; ++p) {
      Deinterleave(dqkv.data(), p, rows, h_, d_, dpart.data());
      BiasBackward(dpart.data(), rows, c_, g(kProjBias[p]));
      LinearBackward(A.x.data(), w(kProjWeight[p]), dpart.data(), rows, c_, c_, dx.data(),
                     g(kProjWeight[p]));
    }
  }
  if (grad_begin != 0) return;
  // x = LayerNorm(e), e = word[ids] + position[t] + token_type[0].
  const std::vector<ParamEntry>& en = layout_.entries();
  std::vector<T> de(static_cast<size_t>(rows * c_), T(0));
  LayerNormBackward(acts.e.data(), params + en[kBertEmbNormW].offset, acts.e_mean.data(),
                    acts.e_rstd.data(), dx.data(), rows, c_, de.data(), grad(en[kBertEmbNormW]),
                    grad(en[kBertEmbNormB]));
  EmbeddingBackward(batch.ids.data(), rows, de.data(), c_, grad(en[kBertWordEmb]));
  PositionEmbeddingBackward(de.data(), batch.offsets.data(), batch.batch_size(), c_,
                            grad(en[kBertPositionEmb]));
  BiasBackward(de.data(), rows, c_, grad(en[kBertTypeEmb]));  // row 0 only
}

template class BertTrainModel<float>;
template class BertTrainModel<double>;

}  // namespace neodb::encoder::train
