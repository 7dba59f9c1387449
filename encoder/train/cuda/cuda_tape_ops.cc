#include "encoder/train/cuda/cuda_tape_ops.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <utility>

#include "encoder/cuda/cuda_check.h"
#include "encoder/models/op_set.h"
#include "encoder/train/cuda/train_kernels.h"
#include "encoder/train/embedding_rows.h"

namespace neodb::encoder::train::cuda {
namespace {

void CheckLaunch(cudaError_t err, const char* what) {
  if (err == cudaSuccess) return;
  std::fprintf(stderr, "training on CUDA: %s failed: %s (%s)\n", what, cudaGetErrorName(err),
               cudaGetErrorString(err));
  std::abort();
}

template <typename T>
void Upload(const std::vector<T>& host, DeviceBuffer* dev, cudaStream_t stream) {
  const size_t bytes = host.size() * sizeof(T);
  CheckOk(dev->Reserve(bytes), "cudaMalloc of the batch");
  if (bytes > 0) {
    CheckLaunch(cudaMemcpyAsync(dev->get(), host.data(), bytes, cudaMemcpyHostToDevice, stream),
                "upload of the batch");
  }
}

void Copy(float* dst, const float* src, int64_t n, cudaStream_t stream) {
  if (n == 0) return;
  CheckLaunch(cudaMemcpyAsync(dst, src, static_cast<size_t>(n) * sizeof(float),
                              cudaMemcpyDeviceToDevice, stream),
              "device copy");
}

void Zero(float* dst, int64_t n, cudaStream_t stream) {
  if (n == 0) return;
  CheckLaunch(cudaMemsetAsync(dst, 0, static_cast<size_t>(n) * sizeof(float), stream),
              "cudaMemsetAsync");
}

// The [rows, parts · w.rows] y += the bias w, part p on column block p, and
// its gradient (tape_ops.cc's AddParts / PartsBackward).
void AddParts(const float* params, const TrainWeight& w, int64_t rows, float* y,
              cudaStream_t stream) {
  const int64_t ld = w.parts * w.rows;
  for (int p = 0; p < w.parts; ++p) {
    CheckLaunch(LaunchAddBias(params + w.offset[p], rows, w.rows, ld, p * w.rows, y, stream),
                "bias");
  }
}
void PartsBackward(const float* dy, const TrainWeight& w, int64_t rows, CudaTapeGrads& g) {
  const int64_t ld = w.parts * w.rows;
  for (int p = 0; p < w.parts; ++p) {
    CheckLaunch(LaunchBiasBackward(dy, rows, w.rows, ld, p * w.rows, g.DP(w, p), g.stream()),
                "bias backward");
  }
}

}  // namespace

void CheckOk(const absl::Status& st, const char* what) {
  if (st.ok()) return;
  std::fprintf(stderr, "training on CUDA: %s: %s\n", what, st.ToString().c_str());
  std::abort();
}

// ---- BufferPool, DeviceBatch ----

DeviceBuffer BufferPool::Take(size_t bytes) {
  size_t best = free_.size();
  for (size_t i = 0; i < free_.size(); ++i) {
    if (best == free_.size()) {
      best = i;
      continue;
    }
    const size_t cap = free_[i].size(), best_cap = free_[best].size();
    const bool fits = cap >= bytes, best_fits = best_cap >= bytes;
    if (fits ? (!best_fits || cap < best_cap) : (!best_fits && cap > best_cap)) best = i;
  }
  DeviceBuffer out;
  if (best < free_.size()) {
    out = std::move(free_[best]);
    free_[best] = std::move(free_.back());
    free_.pop_back();
  }
  CheckOk(out.Reserve(bytes), "cudaMalloc of an activation");
  return out;
}

void BufferPool::Give(DeviceBuffer buffer) {
  if (buffer.get() != nullptr) free_.push_back(std::move(buffer));
}

void DeviceBatch::Upload(const PackedBatch& b, cudaStream_t stream) {
  rows = b.total_tokens();
  batch = b.batch_size();
  max_len = b.longest();
  std::vector<int32_t> pos(static_cast<size_t>(rows));
  for (int64_t s = 0; s < batch; ++s) {
    for (int64_t i = b.offsets[s]; i < b.offsets[s + 1]; ++i) {
      pos[static_cast<size_t>(i)] = static_cast<int32_t>(i - b.offsets[s]);
    }
  }
  const EmbeddingRows by_id = EmbeddingRowsById(b.ids.data(), rows);
  n_unique = static_cast<int64_t>(by_id.unique_ids.size());
  cuda::Upload(b.ids, &ids, stream);
  cuda::Upload(b.offsets, &offsets, stream);
  cuda::Upload(pos, &positions, stream);
  cuda::Upload(by_id.unique_ids, &unique_ids, stream);
  cuda::Upload(by_id.row_begin, &row_begin, stream);
  cuda::Upload(by_id.token_rows, &token_rows, stream);
}

// ---- CudaTapeGrads ----

CudaTapeGrads::CudaTapeGrads(CudaTrainDevice dev, const CudaTape& tape, const float* params,
                             int64_t grad_begin, float* grads, BufferPool* pool)
    : dev_(dev),
      tape_(tape),
      params_(params),
      grad_begin_(grad_begin),
      grads_(grads),
      d_(tape.cols.size()),
      live_(tape.cols.size(), 0),
      pool_(pool) {}

CudaTapeGrads::~CudaTapeGrads() {
  for (size_t v = 0; v < d_.size(); ++v) Release(static_cast<int>(v));
}

float* CudaTapeGrads::DP(const TrainWeight& w, int part) const {
  const int64_t offset = w.offset[part];
  return offset >= grad_begin_ ? grads_ + (offset - grad_begin_) : nullptr;
}

float* CudaTapeGrads::Take(int v) {
  const size_t bytes = static_cast<size_t>(rows() * tape_.cols[static_cast<size_t>(v)]) *
                       sizeof(float);
  d_[static_cast<size_t>(v)] = pool_->Take(bytes);
  live_[static_cast<size_t>(v)] = 1;
  return d_[static_cast<size_t>(v)].as<float>();
}

float* CudaTapeGrads::D(int v) {
  if (live_[static_cast<size_t>(v)]) return d_[static_cast<size_t>(v)].as<float>();
  float* d = Take(v);
  Zero(d, rows() * tape_.cols[static_cast<size_t>(v)], stream());
  return d;
}

float* CudaTapeGrads::Fresh(int v) {
  NEODB_CHECK(!live_[static_cast<size_t>(v)]);
  return Take(v);
}

void CudaTapeGrads::Release(int v) {
  if (!live_[static_cast<size_t>(v)]) return;
  live_[static_cast<size_t>(v)] = 0;
  pool_->Give(std::move(d_[static_cast<size_t>(v)]));
}

float* CudaTapeGrads::Scratch(int64_t n) {
  CheckOk(scratch_.Reserve(static_cast<size_t>(n) * sizeof(float)), "cudaMalloc of scratch");
  return scratch_.as<float>();
}

// ---- CudaTapeOps: the forward bodies and what each keeps ----

CudaTapeOps::CudaTapeOps(CudaTrainDevice dev, const float* params, const PackedBatch& batch,
                         Options options, CudaTape* tape, bool record, int64_t first_layer,
                         const float* x_in, int64_t boundary_layer, float* boundary_out)
    : dev_(dev),
      params_(params),
      o_(options),
      t_(tape),
      record_(record),
      rows_(batch.total_tokens()),
      x_in_(x_in),
      boundary_layer_(boundary_layer),
      boundary_out_(boundary_out) {
  CudaTape& t = *t_;
  for (DeviceBuffer& v : t.values) t.pool.Give(std::move(v));
  t.values.clear();
  t.cols.clear();
  t.saved.clear();
  t.steps.clear();
  t.layer_steps.clear();
  t.first_layer = first_layer;
  t.hidden = -1;
  t.batch.Upload(batch, stream());
}

int CudaTapeOps::New(int64_t cols) {
  CudaTape& t = *t_;
  const int v = static_cast<int>(t.values.size());
  t.values.push_back(t.pool.Take(static_cast<size_t>(rows_ * cols) * sizeof(float)));
  t.cols.push_back(cols);
  t.saved.push_back(0);
  made_.push_back(v);
  return v;
}

void CudaTapeOps::Consume(int v) const { NEODB_CHECK(!t_->saved[static_cast<size_t>(v)]); }

void CudaTapeOps::Record(int out, bool in_place, std::function<void(CudaTapeGrads&)> backward) {
  t_->steps.push_back({out, in_place, std::move(backward)});
}

int CudaTapeOps::Input(int) {
  const int64_t c = o_.heads * o_.head_dim;
  const int x = New(c);
  Copy(M(x), x_in_, rows_ * c, stream());
  return x;
}

int CudaTapeOps::Embedding(const Weight& table, int) {
  const int64_t c = table.cols;
  const int x = New(c);
  CheckLaunch(LaunchEmbeddingForward(t_->batch.ids.as<int32_t>(), rows_, P(table), c, M(x),
                                     stream()),
              "embedding");
  if (record_) {
    Record(x, false, [=](CudaTapeGrads& g) {
      float* dt = g.DP(table);
      if (dt == nullptr) return;
      const DeviceBatch& b = g.batch();
      CheckLaunch(LaunchEmbeddingBackward(b.unique_ids.as<int32_t>(), b.row_begin.as<int32_t>(),
                                          b.token_rows.as<int32_t>(), b.n_unique, g.D(x), c, dt,
                                          g.stream()),
                  "embedding backward");
    });
  }
  return x;
}

int CudaTapeOps::AddPositions(Value x, const Weight& positions, const Weight& type) {
  Consume(x);
  const int64_t c = cols(x);
  CheckLaunch(LaunchPositionEmbeddingForward(P(positions), t_->batch.positions.as<int32_t>(), rows_,
                                             c, M(x), stream()),
              "position embedding");
  CheckLaunch(LaunchAddBias(P(type), rows_, c, c, 0, M(x), stream()), "token type");
  if (record_) {
    Record(x, true, [=](CudaTapeGrads& g) {
      const float* dx = g.D(x);
      const DeviceBatch& b = g.batch();
      if (float* dp = g.DP(positions)) {
        CheckLaunch(LaunchPositionEmbeddingBackward(dx, b.offsets.as<int64_t>(), b.batch,
                                                    b.max_len, c, dp, g.stream()),
                    "position embedding backward");
      }
      CheckLaunch(LaunchBiasBackward(dx, g.rows(), c, c, 0, g.DP(type), g.stream()),
                  "token type backward");
    });
  }
  return x;
}

int CudaTapeOps::RmsNorm(Value x, const Weight& w, int) {
  const int64_t c = cols(x);
  const int y = New(c);
  const int rstd = record_ ? New(1) : -1;
  CheckLaunch(LaunchRmsNormForward(V(x), P(w), rows_, c, o_.eps, M(y),
                                   record_ ? M(rstd) : nullptr, stream()),
              "RMSNorm");
  if (record_) {
    Save(x);
    Save(rstd);
    Record(y, false, [=](CudaTapeGrads& g) {
      CheckLaunch(LaunchRmsNormBackward(g.V(x), g.P(w), g.V(rstd), g.D(y), g.rows(), c, g.D(x),
                                        g.DP(w), g.stream()),
                  "RMSNorm backward");
    });
  }
  return y;
}

int CudaTapeOps::LayerNorm(Value x, const Weight* bias, const Weight& w, const Weight& b, int) {
  const int64_t c = cols(x);
  const bool has_bias = bias != nullptr;
  const Weight bias_w = has_bias ? *bias : Weight{};
  if (has_bias) {
    Consume(x);
    CheckLaunch(LaunchAddBias(P(bias_w), rows_, c, c, 0, M(x), stream()), "bias");
  }
  const int y = New(c);
  const int mean = record_ ? New(1) : -1;
  const int rstd = record_ ? New(1) : -1;
  CheckLaunch(LaunchLayerNormForward(V(x), P(w), P(b), rows_, c, o_.eps, M(y),
                                     record_ ? M(mean) : nullptr, record_ ? M(rstd) : nullptr,
                                     stream()),
              "LayerNorm");
  if (record_) {
    Save(x);
    Save(mean);
    Save(rstd);
    Record(y, false, [=](CudaTapeGrads& g) {
      float* dx = g.D(x);
      CheckLaunch(LaunchLayerNormBackward(g.V(x), g.P(w), g.V(mean), g.V(rstd), g.D(y), g.rows(),
                                          c, dx, g.DP(w), g.DP(b), g.stream()),
                  "LayerNorm backward");
      if (has_bias) {
        CheckLaunch(LaunchBiasBackward(dx, g.rows(), c, c, 0, g.DP(bias_w), g.stream()),
                    "bias backward");
      }
    });
  }
  return y;
}

int CudaTapeOps::Linear(Value x, const Weight& w, int) {
  NEODB_CHECK(cols(x) == w.cols);
  const int64_t out = w.parts * w.rows;
  const int y = New(out);
  for (int p = 0; p < w.parts; ++p) {
    CheckOk(dev_.gemm->Run(false, true, rows_, w.rows, w.cols, 1.f, V(x), w.cols, P(w, p), w.cols,
                           0.f, M(y) + p * w.rows, out),
            "Linear");
  }
  if (record_) {
    Save(x);
    Record(y, false, [=](CudaTapeGrads& g) {
      const float* dy = g.D(y);
      float* dx = g.D(x);
      for (int p = 0; p < w.parts; ++p) {
        const float* dyp = dy + p * w.rows;
        CheckOk(g.dev().gemm->Run(false, false, g.rows(), w.cols, w.rows, 1.f, dyp, out,
                                  g.P(w, p), w.cols, 1.f, dx, w.cols),
                "Linear backward (input)");
        if (float* dw = g.DP(w, p); dw != nullptr && g.rows() > 0) {
          CheckOk(g.dev().gemm->Run(true, false, w.rows, w.cols, g.rows(), 1.f, dyp, out, g.V(x),
                                    w.cols, 1.f, dw, w.cols),
                  "Linear backward (weight)");
        }
      }
    });
  }
  return y;
}

int CudaTapeOps::AddLinear(Value x, Value in, const Weight& w) {
  NEODB_CHECK(w.parts == 1 && cols(in) == w.cols && cols(x) == w.rows);
  const bool in_place = !t_->saved[static_cast<size_t>(x)];
  int y = x;
  if (!in_place) {
    y = New(w.rows);
    Copy(M(y), V(x), rows_ * w.rows, stream());
  }
  CheckOk(dev_.gemm->Run(false, true, rows_, w.rows, w.cols, 1.f, V(in), w.cols, P(w), w.cols,
                         1.f, M(y), w.rows),
          "AddLinear");
  if (record_) {
    Save(in);
    Record(y, in_place, [=](CudaTapeGrads& g) {
      const float* dy = g.D(y);
      if (y != x) {
        CheckLaunch(LaunchAddInto(dy, g.rows() * w.rows, g.D(x), g.stream()), "residual");
      }
      CheckOk(g.dev().gemm->Run(false, false, g.rows(), w.cols, w.rows, 1.f, dy, w.rows, g.P(w),
                                w.cols, 1.f, g.D(in), w.cols),
              "AddLinear backward (input)");
      if (float* dw = g.DP(w); dw != nullptr && g.rows() > 0) {
        CheckOk(g.dev().gemm->Run(true, false, w.rows, w.cols, g.rows(), 1.f, dy, w.rows,
                                  g.V(in), w.cols, 1.f, dw, w.cols),
                "AddLinear backward (weight)");
      }
    });
  }
  return y;
}

int CudaTapeOps::QkvRope(Value y, int) {
  Consume(y);
  const int64_t ld = cols(y), h = o_.heads, d = o_.head_dim;
  NEODB_CHECK(ld == 3 * h * d && o_.rope_cos != nullptr && 2 * o_.rope_half == d);
  NEODB_CHECK(t_->batch.max_len <= o_.rope_positions);
  const float* cs = o_.rope_cos;
  const float* sn = o_.rope_sin;
  const int64_t half = o_.rope_half;
  const int32_t* pos = t_->batch.positions.as<int32_t>();
  CheckLaunch(LaunchRope(M(y), rows_, ld, pos, h, 0, 3 * d, cs, sn, half, false, stream()), "RoPE");
  CheckLaunch(LaunchRope(M(y), rows_, ld, pos, h, d, 3 * d, cs, sn, half, false, stream()), "RoPE");
  if (record_) {
    Record(y, true, [=](CudaTapeGrads& g) {
      float* dy = g.D(y);
      const int32_t* p = g.batch().positions.as<int32_t>();
      CheckLaunch(LaunchRope(dy, g.rows(), ld, p, h, 0, 3 * d, cs, sn, half, true, g.stream()),
                  "RoPE backward");
      CheckLaunch(LaunchRope(dy, g.rows(), ld, p, h, d, 3 * d, cs, sn, half, true, g.stream()),
                  "RoPE backward");
    });
  }
  return y;
}

int CudaTapeOps::SplitQkv(Value y, const Weight& bias, int) {
  Consume(y);
  const int64_t h = o_.heads, d = o_.head_dim;
  NEODB_CHECK(cols(y) == 3 * h * d && bias.parts * bias.rows == 3 * h * d);
  AddParts(params_, bias, rows_, M(y), stream());
  const int heads = New(3 * h * d);
  CheckLaunch(LaunchInterleaveQkv(V(y), rows_, h, d, M(heads), stream()), "q | k | v interleave");
  if (record_) {
    Record(heads, false, [=](CudaTapeGrads& g) {
      float* dy = g.D(y);
      CheckLaunch(LaunchAddDeinterleavedQkv(g.D(heads), g.rows(), h, d, dy, g.stream()),
                  "q | k | v interleave backward");
      PartsBackward(dy, bias, g.rows(), g);
    });
  }
  return heads;
}

int CudaTapeOps::Attention(Heads heads, int) {
  const int64_t h = o_.heads, d = o_.head_dim;
  NEODB_CHECK(cols(heads) == 3 * h * d);
  const int o = New(h * d);
  const int lse = record_ ? New(h) : -1;
  const DeviceBatch& b = t_->batch;
  CheckLaunch(LaunchAttentionForward(V(heads), b.offsets.as<int64_t>(), b.batch, rows_, b.max_len,
                                     h, d, M(o), record_ ? M(lse) : nullptr, stream()),
              "attention");
  if (record_) {
    Save(heads);
    Save(o);
    Save(lse);
    Record(o, false, [=](CudaTapeGrads& g) {
      const DeviceBatch& gb = g.batch();
      float* delta = g.Scratch(g.rows() * h);
      CheckLaunch(LaunchAttentionBackward(g.V(heads), g.V(o), g.V(lse), g.D(o),
                                          gb.offsets.as<int64_t>(), gb.batch, g.rows(),
                                          gb.max_len, h, d, delta, g.Fresh(heads), g.stream()),
                  "attention backward");
    });
  }
  return o;
}

int CudaTapeOps::SwiGlu(Value u, int) {
  const int64_t f = cols(u) / 2;
  const int s = New(f);
  CheckLaunch(LaunchSwiGluForward(V(u), rows_, f, M(s), stream()), "SwiGLU");
  if (record_) {
    Save(u);
    Record(s, false, [=](CudaTapeGrads& g) {
      CheckLaunch(LaunchSwiGluBackward(g.V(u), g.D(s), g.rows(), f, g.Fresh(u), g.stream()),
                  "SwiGLU backward");
    });
  }
  return s;
}

int CudaTapeOps::BiasGelu(Value u, const Weight& bias) {
  Consume(u);
  const int64_t c = cols(u);
  NEODB_CHECK(bias.parts == 1 && bias.rows == c);
  CheckLaunch(LaunchAddBias(P(bias), rows_, c, c, 0, M(u), stream()), "bias");
  const int out = New(c);
  CheckLaunch(LaunchGeluForward(V(u), rows_ * c, M(out), stream()), "GELU");
  if (record_) {
    Save(u);
    Record(out, false, [=](CudaTapeGrads& g) {
      float* du = g.Fresh(u);
      CheckLaunch(LaunchGeluBackward(g.V(u), g.D(out), g.rows() * c, du, g.stream()),
                  "GELU backward");
      CheckLaunch(LaunchBiasBackward(du, g.rows(), c, c, 0, g.DP(bias), g.stream()),
                  "bias backward");
    });
  }
  return out;
}

int CudaTapeOps::EnterLayer(int64_t l, Value x) {
  if (boundary_out_ != nullptr && l == boundary_layer_) {
    Copy(boundary_out_, V(x), rows_ * cols(x), stream());
  }
  if (record_) t_->layer_steps.push_back(t_->steps.size());
  // The previous layer's values that no step reads again give their storage
  // back (x, the layer's input, waits for the next boundary). Reuse is
  // ordered on the one stream, so no synchronisation is needed.
  for (int v : made_) {
    if (v == x || t_->saved[static_cast<size_t>(v)]) continue;
    t_->pool.Give(std::move(t_->values[static_cast<size_t>(v)]));
  }
  made_.assign(1, x);
  return x;
}

void CudaTapeOps::Finish(Value v, float* out) {
  Copy(out, V(v), rows_ * cols(v), stream());
  t_->hidden = v;
}

void CudaTapeBackward(CudaTrainDevice dev, const CudaTape& tape, const float* params,
                      const float* d_hidden, int64_t grad_begin, int64_t stop_layer,
                      float* grads, BufferPool* pool) {
  NEODB_CHECK(tape.hidden >= 0);
  CudaTapeGrads g(dev, tape, params, grad_begin, grads, pool);
  float* dh = g.Fresh(tape.hidden);
  Copy(dh, d_hidden, g.rows() * tape.cols[static_cast<size_t>(tape.hidden)], g.stream());
  const size_t end =
      grad_begin == 0 ? 0 : tape.layer_steps[static_cast<size_t>(stop_layer - tape.first_layer)];
  for (size_t s = tape.steps.size(); s-- > end;) {
    const CudaTape::Step& step = tape.steps[s];
    step.backward(g);
    if (!step.in_place) g.Release(step.out);
  }
  // Buffers return to the pool when g goes; later work on the one stream
  // reuses them in order, so nothing needs to wait here.
}

static_assert(models::OpSet<CudaTapeOps>);

}  // namespace neodb::encoder::train::cuda
