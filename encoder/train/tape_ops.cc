#include "encoder/train/tape_ops.h"

#include <algorithm>
#include <utility>

#include "common/status_macros.h"
#include "encoder/models/op_set.h"
#include "encoder/train/attention.h"
#include "encoder/train/blas.h"
#include "encoder/train/embedding_pooling.h"
#include "encoder/train/gelu.h"
#include "encoder/train/layer_norm.h"
#include "encoder/train/linear.h"
#include "encoder/train/rms_norm.h"
#include "encoder/train/swiglu.h"

namespace neodb::encoder::train {
namespace {

// Moves into *out, sized n, the pooled vector that holds n with the least to
// spare, else the largest (contents unspecified).
template <typename T>
void TakeFromPool(std::vector<std::vector<T>>* pool, size_t n, std::vector<T>* out) {
  size_t best = pool->size();
  for (size_t i = 0; i < pool->size(); ++i) {
    if (best == pool->size()) {
      best = i;
      continue;
    }
    const size_t cap = (*pool)[i].capacity(), best_cap = (*pool)[best].capacity();
    const bool fits = cap >= n, best_fits = best_cap >= n;
    if (fits ? (!best_fits || cap < best_cap) : (!best_fits && cap > best_cap)) best = i;
  }
  if (best < pool->size()) {
    out->swap((*pool)[best]);
    (*pool)[best].swap(pool->back());
    pool->pop_back();
  }
  out->resize(n);
}

// q | k | v column blocks [rows, 3·H·D] ↔ the head-interleaved layout the
// attention reads (head h: q, k, v at 3Dh, 3Dh + D, 3Dh + 2D). Interleave
// writes `to`; the gradient direction ADDS into `from`.
template <typename T>
void Interleave(const T* blocks, int64_t rows, int64_t heads, int64_t d, T* interleaved) {
  const int64_t c = heads * d;
  for (int64_t r = 0; r < rows; ++r) {
    for (int p = 0; p < 3; ++p) {
      for (int64_t h = 0; h < heads; ++h) {
        const T* src = blocks + r * 3 * c + p * c + h * d;
        std::copy(src, src + d, interleaved + r * 3 * c + 3 * d * h + p * d);
      }
    }
  }
}
template <typename T>
void AddDeinterleaved(const T* interleaved, int64_t rows, int64_t heads, int64_t d, T* blocks) {
  const int64_t c = heads * d;
  for (int64_t r = 0; r < rows; ++r) {
    for (int p = 0; p < 3; ++p) {
      for (int64_t h = 0; h < heads; ++h) {
        const T* src = interleaved + r * 3 * c + 3 * d * h + p * d;
        T* dst = blocks + r * 3 * c + p * c + h * d;
        for (int64_t i = 0; i < d; ++i) dst[i] += src[i];
      }
    }
  }
}

// y [rows, parts · w.rows] += the bias w, part p on column block p.
template <typename T>
void AddParts(const T* params, const TrainWeight& w, int64_t rows, T* y) {
  const int64_t ld = w.parts * w.rows;
  for (int p = 0; p < w.parts; ++p) {
    const T* b = params + w.offset[p];
    for (int64_t r = 0; r < rows; ++r) {
      for (int64_t c = 0; c < w.rows; ++c) y[r * ld + p * w.rows + c] += b[c];
    }
  }
}
template <typename T>
void PartsBackward(const T* dy, const TrainWeight& w, int64_t rows, TapeGrads<T>& g) {
  const int64_t ld = w.parts * w.rows;
  for (int p = 0; p < w.parts; ++p) {
    T* db = g.DP(w, p);
    if (db == nullptr) continue;
    for (int64_t r = 0; r < rows; ++r) {
      for (int64_t c = 0; c < w.rows; ++c) db[c] += dy[r * ld + p * w.rows + c];
    }
  }
}

}  // namespace

TrainWeight Param(const ParamEntry& e) {
  TrainWeight w;
  w.offset[0] = e.offset;
  w.rows = e.shape.empty() ? 1 : e.shape[0];
  w.cols = e.shape.size() >= 2 ? e.shape[1] : 1;
  NEODB_CHECK(w.rows * w.cols == e.numel);
  return w;
}

TrainWeight StackedParams(const ParamEntry& a, const ParamEntry& b, const ParamEntry& c) {
  NEODB_CHECK(a.shape == b.shape && a.shape == c.shape);
  TrainWeight w = Param(a);
  w.parts = 3;
  w.offset = {a.offset, b.offset, c.offset};
  return w;
}

// ---- TapeGrads ----

template <typename T>
TapeGrads<T>::TapeGrads(const Tape<T>& tape, const T* params, const PackedBatch& batch,
                        int64_t grad_begin, T* grads)
    : tape_(tape),
      params_(params),
      batch_(batch),
      rows_(batch.total_tokens()),
      grad_begin_(grad_begin),
      grads_(grads),
      d_(tape.cols.size()),
      live_(tape.cols.size(), 0) {}

template <typename T>
T* TapeGrads<T>::DP(const TrainWeight& w, int part) const {
  const int64_t offset = w.offset[part];
  return offset >= grad_begin_ ? grads_ + (offset - grad_begin_) : nullptr;
}

template <typename T>
std::vector<T>* TapeGrads<T>::Take(int v) {
  std::vector<T>* d = &d_[static_cast<size_t>(v)];
  TakeFromPool(&pool_, static_cast<size_t>(rows_ * tape_.cols[static_cast<size_t>(v)]), d);
  live_[static_cast<size_t>(v)] = 1;
  return d;
}

template <typename T>
T* TapeGrads<T>::D(int v) {
  if (live_[static_cast<size_t>(v)]) return d_[static_cast<size_t>(v)].data();
  std::vector<T>* d = Take(v);
  std::fill(d->begin(), d->end(), T(0));
  return d->data();
}

template <typename T>
T* TapeGrads<T>::Fresh(int v) {
  NEODB_CHECK(!live_[static_cast<size_t>(v)]);
  return Take(v)->data();
}

template <typename T>
void TapeGrads<T>::Release(int v) {
  if (!live_[static_cast<size_t>(v)]) return;
  live_[static_cast<size_t>(v)] = 0;
  pool_.push_back(std::move(d_[static_cast<size_t>(v)]));
  d_[static_cast<size_t>(v)] = {};
}

// ---- TapeOps: the forward bodies and what each keeps ----

template <typename T>
TapeOps<T>::TapeOps(const T* params, const PackedBatch& batch, Options options, Tape<T>* tape,
                    int64_t first_layer, const T* x_in, int64_t boundary_layer, T* boundary_out)
    : params_(params),
      batch_(batch),
      o_(options),
      t_(tape != nullptr ? tape : &local_),
      record_(tape != nullptr),
      rows_(batch.total_tokens()),
      x_in_(x_in),
      boundary_layer_(boundary_layer),
      boundary_out_(boundary_out) {
  Tape<T>& t = *t_;
  for (std::vector<T>& v : t.values) {
    if (v.capacity() > 0) t.pool.push_back(std::move(v));
  }
  t.values.clear();
  t.cols.clear();
  t.saved.clear();
  t.steps.clear();
  t.layer_steps.clear();
  t.first_layer = first_layer;
  t.hidden = -1;
  t.positions.resize(static_cast<size_t>(rows_));
  for (int64_t b = 0; b < batch.batch_size(); ++b) {
    for (int64_t i = batch.offsets[b]; i < batch.offsets[b + 1]; ++i) {
      t.positions[static_cast<size_t>(i)] = static_cast<int32_t>(i - batch.offsets[b]);
    }
  }
}

template <typename T>
int TapeOps<T>::New(int64_t cols) {
  Tape<T>& t = *t_;
  const int v = static_cast<int>(t.values.size());
  t.values.emplace_back();
  TakeFromPool(&t.pool, static_cast<size_t>(rows_ * cols), &t.values.back());
  t.cols.push_back(cols);
  t.saved.push_back(0);
  made_.push_back(v);
  return v;
}

template <typename T>
void TapeOps<T>::Consume(int v) const {
  NEODB_CHECK(!t_->saved[static_cast<size_t>(v)]);
}

template <typename T>
void TapeOps<T>::Record(int out, bool in_place, std::function<void(TapeGrads<T>&)> backward) {
  t_->steps.push_back({out, in_place, std::move(backward)});
}

template <typename T>
int TapeOps<T>::Input(int) {
  const int64_t c = o_.heads * o_.head_dim;
  const int x = New(c);
  std::copy(x_in_, x_in_ + rows_ * c, M(x));
  return x;
}

template <typename T>
int TapeOps<T>::Embedding(const Weight& table, int) {
  const int64_t c = table.cols;
  const int x = New(c);
  EmbeddingForward(batch_.ids.data(), rows_, P(table), c, M(x));
  if (record_) {
    Record(x, false, [=](TapeGrads<T>& g) {
      if (T* dt = g.DP(table)) EmbeddingBackward(g.batch().ids.data(), g.rows(), g.D(x), c, dt);
    });
  }
  return x;
}

template <typename T>
int TapeOps<T>::AddPositions(Value x, const Weight& positions, const Weight& type) {
  Consume(x);
  const int64_t c = cols(x);
  const int64_t batch = batch_.batch_size();
  PositionEmbeddingForward(P(positions), batch_.offsets.data(), batch, c, M(x));
  AddBias(P(type), rows_, c, M(x));  // type row 0: one segment
  if (record_) {
    Record(x, true, [=](TapeGrads<T>& g) {
      const T* dx = g.D(x);
      if (T* dp = g.DP(positions)) {
        PositionEmbeddingBackward(dx, g.batch().offsets.data(), batch, c, dp);
      }
      BiasBackward(dx, g.rows(), c, g.DP(type));
    });
  }
  return x;
}

template <typename T>
int TapeOps<T>::RmsNorm(Value x, const Weight& w, int) {
  const int64_t c = cols(x);
  const int y = New(c);
  const int rstd = record_ ? New(1) : -1;
  RmsNormForward(V(x), P(w), rows_, c, o_.eps, M(y), record_ ? M(rstd) : nullptr);
  if (record_) {
    Save(x);
    Save(rstd);
    Record(y, false, [=](TapeGrads<T>& g) {
      RmsNormBackward(g.V(x), g.P(w), g.V(rstd), g.D(y), g.rows(), c, g.D(x), g.DP(w));
    });
  }
  return y;
}

template <typename T>
int TapeOps<T>::LayerNorm(Value x, const Weight* bias, const Weight& w, const Weight& b, int) {
  const int64_t c = cols(x);
  const bool has_bias = bias != nullptr;
  const Weight bias_w = has_bias ? *bias : Weight{};
  if (has_bias) {
    Consume(x);
    AddBias(P(bias_w), rows_, c, M(x));
  }
  const int y = New(c);
  const int mean = record_ ? New(1) : -1;
  const int rstd = record_ ? New(1) : -1;
  LayerNormForward(V(x), P(w), P(b), rows_, c, o_.eps, M(y), record_ ? M(mean) : nullptr,
                   record_ ? M(rstd) : nullptr);
  if (record_) {
    Save(x);
    Save(mean);
    Save(rstd);
    Record(y, false, [=](TapeGrads<T>& g) {
      T* dx = g.D(x);
      LayerNormBackward(g.V(x), g.P(w), g.V(mean), g.V(rstd), g.D(y), g.rows(), c, dx, g.DP(w),
                        g.DP(b));
      if (has_bias) BiasBackward(dx, g.rows(), c, g.DP(bias_w));
    });
  }
  return y;
}

template <typename T>
int TapeOps<T>::Linear(Value x, const Weight& w, int) {
  NEODB_CHECK(cols(x) == w.cols);
  const int64_t out = w.parts * w.rows;
  const int y = New(out);
  for (int p = 0; p < w.parts; ++p) {
    Gemm<T>(false, true, rows_, w.rows, w.cols, T(1), V(x), w.cols, P(w, p), w.cols, T(0),
            M(y) + p * w.rows, out);
  }
  if (record_) {
    Save(x);
    Record(y, false, [=](TapeGrads<T>& g) {
      const T* dy = g.D(y);
      T* dx = g.D(x);
      for (int p = 0; p < w.parts; ++p) {
        const T* dyp = dy + p * w.rows;
        Gemm<T>(false, false, g.rows(), w.cols, w.rows, T(1), dyp, out, g.P(w, p), w.cols, T(1),
                dx, w.cols);
        if (T* dw = g.DP(w, p); dw != nullptr && g.rows() > 0) {
          Gemm<T>(true, false, w.rows, w.cols, g.rows(), T(1), dyp, out, g.V(x), w.cols, T(1), dw,
                  w.cols);
        }
      }
    });
  }
  return y;
}

template <typename T>
int TapeOps<T>::AddLinear(Value x, Value in, const Weight& w) {
  NEODB_CHECK(w.parts == 1 && cols(in) == w.cols && cols(x) == w.rows);
  const bool in_place = !t_->saved[static_cast<size_t>(x)];
  int y = x;
  if (!in_place) {
    y = New(w.rows);
    std::copy(V(x), V(x) + rows_ * w.rows, M(y));
  }
  Gemm<T>(false, true, rows_, w.rows, w.cols, T(1), V(in), w.cols, P(w), w.cols, T(1), M(y),
          w.rows);
  if (record_) {
    Save(in);
    Record(y, in_place, [=](TapeGrads<T>& g) {
      const T* dy = g.D(y);
      if (y != x) {
        T* dx = g.D(x);
        for (int64_t i = 0; i < g.rows() * w.rows; ++i) dx[i] += dy[i];
      }
      LinearBackward(g.V(in), g.P(w), dy, g.rows(), w.cols, w.rows, g.D(in), g.DP(w));
    });
  }
  return y;
}

template <typename T>
int TapeOps<T>::QkvRope(Value y, int) {
  Consume(y);
  const int64_t ld = cols(y), h = o_.heads, d = o_.head_dim;
  NEODB_CHECK(ld == 3 * h * d && o_.rope != nullptr);
  const RopeTable<T>* rope = o_.rope;
  RopeApply(M(y), rows_, ld, t_->positions.data(), h, 0, 3 * d, *rope, false);  // q
  RopeApply(M(y), rows_, ld, t_->positions.data(), h, d, 3 * d, *rope, false);  // k
  if (record_) {
    Record(y, true, [=](TapeGrads<T>& g) {
      T* dy = g.D(y);
      const int32_t* pos = g.tape().positions.data();
      RopeApply(dy, g.rows(), ld, pos, h, 0, 3 * d, *rope, true);
      RopeApply(dy, g.rows(), ld, pos, h, d, 3 * d, *rope, true);
    });
  }
  return y;
}

template <typename T>
int TapeOps<T>::SplitQkv(Value y, const Weight& bias, int) {
  Consume(y);
  const int64_t h = o_.heads, d = o_.head_dim;
  NEODB_CHECK(cols(y) == 3 * h * d && bias.parts * bias.rows == 3 * h * d);
  AddParts(params_, bias, rows_, M(y));
  const int heads = New(3 * h * d);
  Interleave(V(y), rows_, h, d, M(heads));
  if (record_) {
    Record(heads, false, [=](TapeGrads<T>& g) {
      T* dy = g.D(y);
      AddDeinterleaved(g.D(heads), g.rows(), h, d, dy);
      PartsBackward(dy, bias, g.rows(), g);
    });
  }
  return heads;
}

template <typename T>
int TapeOps<T>::Attention(Heads heads, int) {
  const int64_t h = o_.heads, d = o_.head_dim;
  NEODB_CHECK(cols(heads) == 3 * h * d);
  const int o = New(h * d);
  const int lse = record_ ? New(h) : -1;
  const int64_t batch = batch_.batch_size();
  AttentionForward(V(heads), batch_.offsets.data(), batch, h, d, M(o),
                   record_ ? M(lse) : nullptr);
  if (record_) {
    Save(heads);
    Save(o);
    Save(lse);
    Record(o, false, [=](TapeGrads<T>& g) {
      AttentionBackward(g.V(heads), g.V(o), g.V(lse), g.D(o), g.batch().offsets.data(), batch, h,
                        d, g.Fresh(heads));
    });
  }
  return o;
}

template <typename T>
int TapeOps<T>::SwiGlu(Value u, int) {
  const int64_t f = cols(u) / 2;
  const int s = New(f);
  SwiGluForward(V(u), rows_, f, M(s));
  if (record_) {
    Save(u);
    Record(s, false, [=](TapeGrads<T>& g) {
      SwiGluBackward(g.V(u), g.D(s), g.rows(), f, g.Fresh(u));
    });
  }
  return s;
}

template <typename T>
int TapeOps<T>::BiasGelu(Value u, const Weight& bias) {
  Consume(u);
  const int64_t c = cols(u);
  NEODB_CHECK(bias.parts == 1 && bias.rows == c);
  AddBias(P(bias), rows_, c, M(u));
  const int out = New(c);
  GeluForward(V(u), rows_ * c, M(out));
  if (record_) {
    Save(u);
    Record(out, false, [=](TapeGrads<T>& g) {
      T* du = g.Fresh(u);
      GeluBackward(g.V(u), g.D(out), g.rows() * c, du);
      BiasBackward(du, g.rows(), c, g.DP(bias));
    });
  }
  return out;
}

template <typename T>
int TapeOps<T>::EnterLayer(int64_t l, Value x) {
  if (boundary_out_ != nullptr && l == boundary_layer_) {
    std::copy(V(x), V(x) + rows_ * cols(x), boundary_out_);
  }
  if (record_) t_->layer_steps.push_back(t_->steps.size());
  // The previous layer's values that no step reads again give their storage
  // back (x, the layer's input, waits for the next boundary).
  for (int v : made_) {
    if (v == x || t_->saved[static_cast<size_t>(v)]) continue;
    std::vector<T>& storage = t_->values[static_cast<size_t>(v)];
    t_->pool.push_back(std::move(storage));
    storage = {};
  }
  made_.assign(1, x);
  return x;
}

template <typename T>
void TapeOps<T>::Finish(Value v, T* out) {
  std::copy(V(v), V(v) + rows_ * cols(v), out);
  t_->hidden = v;
}

template <typename T>
void TapeBackward(const Tape<T>& tape, const T* params, const PackedBatch& batch,
                  const T* d_hidden, int64_t grad_begin, int64_t stop_layer, T* grads) {
  NEODB_CHECK(tape.hidden >= 0);
  TapeGrads<T> g(tape, params, batch, grad_begin, grads);
  T* dh = g.Fresh(tape.hidden);
  std::copy(d_hidden, d_hidden + g.rows() * tape.cols[static_cast<size_t>(tape.hidden)], dh);
  const size_t end =
      grad_begin == 0 ? 0 : tape.layer_steps[static_cast<size_t>(stop_layer - tape.first_layer)];
  for (size_t s = tape.steps.size(); s-- > end;) {
    const typename Tape<T>::Step& step = tape.steps[s];
    step.backward(g);
    if (!step.in_place) g.Release(step.out);
  }
}

static_assert(models::OpSet<TapeOps<float>> && models::OpSet<TapeOps<double>>);

template class TapeGrads<float>;
template class TapeGrads<double>;
template class TapeOps<float>;
template class TapeOps<double>;
template void TapeBackward<float>(const Tape<float>&, const float*, const PackedBatch&,
                                  const float*, int64_t, int64_t, float*);
template void TapeBackward<double>(const Tape<double>&, const double*, const PackedBatch&,
                                   const double*, int64_t, int64_t, double*);

}  // namespace neodb::encoder::train
