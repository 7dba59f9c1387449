#include "encoder/train/neobert_train_model.h"

#include <algorithm>

#include "common/status_macros.h"
#include "encoder/train/attention.h"
#include "encoder/train/blas.h"
#include "encoder/train/embedding_pooling.h"
#include "encoder/train/layer_stack.h"
#include "encoder/train/linear.h"
#include "encoder/train/rms_norm.h"
#include "encoder/train/swiglu.h"

namespace neodb::encoder::train {

template <typename T>
NeoBertTrainModel<T>::NeoBertTrainModel(const ParamLayout& layout)
    : layout_(layout),
      c_(layout.config().hidden_size),
      f_(FfnDim(layout.config())),
      h_(layout.config().num_attention_heads),
      d_(layout.config().head_dim()),
      rope_(layout.config().max_length, layout.config().head_dim(), layout.config().rope_theta) {}

template <typename T>
void NeoBertTrainModel<T>::LayerForward(const T* params, int64_t l, const PackedBatch& batch,
                                 const int32_t* positions, const T* x, LayerActs* A, bool keep,
                                 T* x_out) const {
  const int64_t rows = batch.total_tokens();
  const double eps = layout_.config().norm_eps;
  auto w = [&](int t) { return params + layout_.layer(l, t).offset; };

  if (keep) A->x.assign(x, x + rows * c_);
  Resize(&A->rstd1, rows);
  Resize(&A->a, rows * c_);
  Resize(&A->qkv, rows * 3 * c_);
  Resize(&A->o, rows * c_);
  Resize(&A->x1, rows * c_);
  Resize(&A->rstd2, rows);
  Resize(&A->f, rows * c_);
  Resize(&A->u, rows * 2 * f_);
  Resize(&A->s, rows * f_);
  if (keep) Resize(&A->lse, rows * h_);

  RmsNormForward(x, w(kAttentionNorm), rows, c_, eps, A->a.data(), A->rstd1.data());
  LinearForward(A->a.data(), w(kQkv), rows, c_, 3 * c_, A->qkv.data());
  RopeApply(A->qkv.data(), rows, 3 * c_, positions, h_, 0, 3 * d_, rope_, false);   // q
  RopeApply(A->qkv.data(), rows, 3 * c_, positions, h_, d_, 3 * d_, rope_, false);  // k
  AttentionForward(A->qkv.data(), batch.offsets.data(), batch.batch_size(), h_, d_, A->o.data(),
                   keep ? A->lse.data() : nullptr);
  // x1 = x + o · woᵀ
  std::copy(x, x + rows * c_, A->x1.data());
  Gemm<T>(false, true, rows, c_, c_, T(1), A->o.data(), c_, w(kWo), c_, T(1), A->x1.data(), c_);
  RmsNormForward(A->x1.data(), w(kFfnNorm), rows, c_, eps, A->f.data(), A->rstd2.data());
  LinearForward(A->f.data(), w(kW12), rows, c_, 2 * f_, A->u.data());
  SwiGluForward(A->u.data(), rows, f_, A->s.data());
  // x_out = x1 + s · w3ᵀ
  std::copy(A->x1.begin(), A->x1.begin() + rows * c_, x_out);
  Gemm<T>(false, true, rows, c_, f_, T(1), A->s.data(), f_, w(kW3), f_, T(1), x_out, c_);
}

template <typename T>
void NeoBertTrainModel<T>::Forward(const T* params, const PackedBatch& batch, int64_t first_layer,
                                   const T* x_in, T* hidden,
                                   std::unique_ptr<ArchActivations>* arch_acts,
                                   int64_t boundary_layer, T* boundary_out) const {
  CheckForwardArgs(layout_, batch, first_layer, x_in, boundary_layer, boundary_out);
  Acts* acts = ReuseOrMakeActs<Acts>(arch_acts);
  const int64_t rows = batch.total_tokens();
  std::vector<int32_t> local_positions;
  std::vector<int32_t>& positions = acts != nullptr ? acts->positions : local_positions;
  positions.resize(static_cast<size_t>(rows));
  for (int64_t b = 0; b < batch.batch_size(); ++b) {
    for (int64_t t = batch.offsets[b]; t < batch.offsets[b + 1]; ++t) {
      positions[t] = static_cast<int32_t>(t - batch.offsets[b]);
    }
  }

  std::vector<T> x(static_cast<size_t>(rows * c_));
  if (first_layer == 0) {
    EmbeddingForward(batch.ids.data(), rows, params + layout_.embeddings().offset, c_, x.data());
  } else {
    std::copy(x_in, x_in + rows * c_, x.begin());
  }
  RunLayerStack(first_layer, layout_.num_layers(), &x, acts, boundary_layer, boundary_out,
                [&](int64_t l, const T* in, LayerActs* a, bool keep, T* out) {
                  LayerForward(params, l, batch, positions.data(), in, a, keep, out);
                });
  std::vector<T> rstd(static_cast<size_t>(rows));
  RmsNormForward(x.data(), params + layout_.final_norm().offset, rows, c_,
                 layout_.config().norm_eps, hidden, rstd.data());
  if (acts != nullptr) {
    acts->x_final = std::move(x);
    acts->rstd_final = std::move(rstd);
  }
}

template <typename T>
void NeoBertTrainModel<T>::BackwardFromHidden(const T* params, const PackedBatch& batch,
                                              const ArchActivations& arch_acts, const T* d_hidden,
                                              int64_t grad_begin, T* grads) const {
  const Acts& acts = static_cast<const Acts&>(arch_acts);
  // The final norm follows the last layer: LayerBegin(L) is its offset.
  const int64_t stop_layer = LowestTrainedLayer(layout_, grad_begin, acts.first_layer);
  const int64_t rows = batch.total_tokens();
  auto grad = [&](const ParamEntry& e) { return grads + (e.offset - grad_begin); };

  std::vector<T> dx(static_cast<size_t>(rows * c_), T(0));
  RmsNormBackward(acts.x_final.data(), params + layout_.final_norm().offset, acts.rstd_final.data(),
                  d_hidden, rows, c_, dx.data(), grad(layout_.final_norm()));

  std::vector<T> ds, du, df, d_o, dqkv, da;
  for (int64_t l = layout_.num_layers() - 1; l >= stop_layer; --l) {
    const LayerActs& A = acts.layers[l - acts.first_layer];
    auto w = [&](int t) { return params + layout_.layer(l, t).offset; };
    auto g = [&](int t) { return grad(layout_.layer(l, t)); };
    // FFN block: x2 = x1 + w3(SwiGLU(w12(RMSNorm(x1)))).
    Zero(&ds, rows * f_);
    LinearBackward(A.s.data(), w(kW3), dx.data(), rows, f_, c_, ds.data(), g(kW3));
    Resize(&du, rows * 2 * f_);
    SwiGluBackward(A.u.data(), ds.data(), rows, f_, du.data());
    Zero(&df, rows * c_);
    LinearBackward(A.f.data(), w(kW12), du.data(), rows, c_, 2 * f_, df.data(), g(kW12));
    RmsNormBackward(A.x1.data(), w(kFfnNorm), A.rstd2.data(), df.data(), rows, c_, dx.data(),
                    g(kFfnNorm));
    // Attention block: x1 = x + wo(Attention(RoPE(qkv(RMSNorm(x))))).
    Zero(&d_o, rows * c_);
    LinearBackward(A.o.data(), w(kWo), dx.data(), rows, c_, c_, d_o.data(), g(kWo));
    Resize(&dqkv, rows * 3 * c_);
    AttentionBackward(A.qkv.data(), A.o.data(), A.lse.data(), d_o.data(), batch.offsets.data(),
                      batch.batch_size(), h_, d_, dqkv.data());
    RopeApply(dqkv.data(), rows, 3 * c_, acts.positions.data(), h_, 0, 3 * d_, rope_, true);
    RopeApply(dqkv.data(), rows, 3 * c_, acts.positions.data(), h_, d_, 3 * d_, rope_, true);
    Zero(&da, rows * c_);
    LinearBackward(A.a.data(), w(kQkv), dqkv.data(), rows, c_, 3 * c_, da.data(), g(kQkv));
    RmsNormBackward(A.x.data(), w(kAttentionNorm), A.rstd1.data(), da.data(), rows, c_, dx.data(),
                    g(kAttentionNorm));
  }
  if (grad_begin == 0) {
    EmbeddingBackward(batch.ids.data(), rows, dx.data(), c_, grad(layout_.embeddings()));
  }
}

template class NeoBertTrainModel<float>;
template class NeoBertTrainModel<double>;

}  // namespace neodb::encoder::train
